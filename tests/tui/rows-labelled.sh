#!/bin/bash
# Every marker of the stable-rank panel is on the row its y labels say: the identity preset at
# 80×24 gives the panel a log axis of 2 rows, where sr = 33.4 (layer 1) was drawn on the row
# labelled 256, the row below labelled 10.  The values are --batch's for the same settings;
# each marker's place is interpolated in log10 between the two labels around it (extrapolated
# past the last two) as a reader would, and its row must be that place rounded (within half a
# row).  At 80×24 and 100×30; and the gradient view (v v), whose 3-row log axis across a
# twentieth of a decade had no label at all, where it now has the linear steps of its values.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

ARGS="--preset identity"
# shellcheck disable=SC2086
if ! "$BIN" $ARGS --batch >"$TMP/batch.json" 2>"$TMP/batch.err"; then
    not_ok "--batch $ARGS runs" "$TMP/batch.err"
    finish
    exit 1
fi

# The panel titled $3 of the screen in $1 against the document $2's values under the keys $4
# (the network's, ● and ◉) and $5 (the counterpart's, ○ and ◉), one a marker column: prints
# what is wrong (nothing when every marker is where its labels say); exits 1 when anything is.
markers_on_labelled_rows() { # screen document title network-key counterpart-key
    python3 - "$@" <<'EOF'
import json, math, re, sys
screen = open(sys.argv[1], encoding="utf-8").read().split("\n")
doc = json.load(open(sys.argv[2]))
network, counterpart = doc[sys.argv[4]], doc[sys.argv[5]]
title = next(i for i, line in enumerate(screen) if sys.argv[3] in line)
left = screen[title].index(sys.argv[3])
axis_row = next(i for i in range(title, len(screen)) if "└" in screen[i][left:])
axis_col = screen[axis_row].index("└", left)
labels, markers, wrong = [], {}, []
for row in range(title + 1, axis_row):
    line = screen[row].ljust(axis_col + 1)
    if line[axis_col] == "┤":
        text = line[left:axis_col].split()[-1]
        mantissa, _, exponent = text.partition("e")
        labels.append((row, math.log10(float(mantissa)) + float(exponent or 0)))
    for col in range(axis_col + 1, len(line)):
        if line[col] in "●○◉":
            markers.setdefault(col, []).append((row, line[col]))
if len(labels) < 2:
    wrong.append("fewer than two labels: %r" % labels)
columns = sorted(markers)
if len(columns) != len(network):
    wrong.append("markers in %d columns, %d layers" % (len(columns), len(network)))
def place(v):  # the row the labels put log10 value v on
    k = 0
    while k < len(labels) - 2 and v < labels[k + 1][1]:
        k += 1
    (r0, v0), (r1, v1) = labels[k], labels[k + 1]
    return r0 + (v - v0) / (v1 - v0) * (r1 - r0)
for layer, col in enumerate(columns[:len(network)]):
    for row, glyph in markers[col]:
        values = {"●": [network], "○": [counterpart], "◉": [network, counterpart]}[glyph]
        for series in values:
            v = math.log10(max(series[layer], 1.0))
            if len(labels) >= 2 and abs(row - place(v)) > 0.5 + 1e-9:
                wrong.append("layer %d: %s %.4g on row %d, the labels put it at %.2f (%r)"
                             % (layer, glyph, series[layer], row, place(v), labels))
print("\n".join(wrong))
sys.exit(1 if wrong else 0)
EOF
}

# The panel on the screen now against the document: ok, or not ok with what is wrong.
check_panel() { # description title network-key counterpart-key
    screen >"$TMP/screen.txt"
    if markers_on_labelled_rows "$TMP/screen.txt" "$TMP/batch.json" "$2" "$3" "$4" >"$TMP/wrong.txt"; then
        ok "$1"
    else
        cat "$TMP/screen.txt" >>"$TMP/wrong.txt"
        not_ok "$1" "$TMP/wrong.txt"
    fi
}

for size in "80 24" "100 30"; do
    read -r cols rows <<<"$size"
    trace="$TMP/rows-$cols.trace"
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $ARGS --no-confirm --trace '$trace'"
    expect "${cols}x$rows: the ensemble is done" "mean of 4 seeds"
    check "  the screen settles" settled
    check_panel "${cols}x$rows: every stable-rank marker is on the row its labels say" \
        "stable rank sr(Σℓ) against depth" stable_rank_mean counterpart_stable_rank_mean
    press "${cols}x$rows: v v, the gradient view" "view: gradient norms" v v
    check "  the screen settles" settled
    check_panel "${cols}x$rows: every gradient marker is on the row its labels say" \
        "gradient norm ‖∂X_L/∂W^V_ℓ‖_F²" gradient_norm counterpart_gradient_norm
    quits "${cols}x$rows: q quits"
done
finish
