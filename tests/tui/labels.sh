#!/bin/bash
# Labels in the eigenvalue panel under LANG=C (issue 27): in ASCII a cell of dots is a
# character too, and the outlier's label "lambda1" ran into the bulk and the circles
# ("::::lambda1> :").  At 80x24, 100x30 and 120x40, plain and in presentation mode, and in
# the compare view (the label "lambda1->0" of the eigenvalue gap removal sends to 0): every
# label on the screen stands whole, a blank (or its own marker, or the panel's edge) on each
# side.  The legend's entries ("> lambda1 = 1, ...") are not labels and are left out.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Prints what is wrong with the labels on the screen in $1 (nothing when all stand apart);
# exits 1 when a label touches other text or none is there.
labels_apart() {
    python3 - "$1" <<'EOF'
import re, sys
MARKERS = "><^v"  # the outlier's arrows in ASCII
labels, wrong = 0, []
for line in open(sys.argv[1]).read().split("\n"):
    for m in re.finditer(r"lambda1(->0)?", line):
        after = line[m.end():m.end() + 2]
        if after[:1] in ("|", ":") or after.startswith(" =") or after.startswith("="):
            continue  # a legend's entry or the status line, not a label
        labels += 1
        before = line[m.start() - 1] if m.start() > 0 else " "
        # The removed outlier's marker "0" sits beside its label; the arrows beside theirs.
        own = MARKERS + ("0" if m.group(1) else "")
        if before not in " " + own or after[:1] not in ("", " ") and after[:1] not in own:
            wrong.append("touches other text: %r" % line.strip())
if labels == 0:
    wrong.append("no label on the screen")
print("\n".join("    # " + w for w in wrong))
sys.exit(1 if wrong else 0)
EOF
}

for size in "80 24" "100 30" "120 40"; do
    read -r cols rows <<<"$size"
    trace="$TMP/labels-$cols.trace"
    start "$cols" "$rows" "env LANG=C LC_ALL=C '$BIN' -T 64 -d 64 -L 3 --trace '$trace'"
    check "${cols}x$rows LANG=C: the screen settles" settled
    screen >"$TMP/plain.txt"
    check "${cols}x$rows LANG=C: the outlier's label stands whole" labels_apart "$TMP/plain.txt"
    press "${cols}x$rows LANG=C: Z, presentation mode" "presentation mode on" Z
    check "  it settles" settled
    screen >"$TMP/present.txt"
    check "${cols}x$rows LANG=C presentation mode: the label stands whole" labels_apart "$TMP/present.txt"
    # At 80x24 the compare view's eigenvalue panels are too small to be drawn.
    if [ "$cols" -gt 80 ]; then
        press "${cols}x$rows LANG=C: Z off, c: the compare view" "compare view on" Z c
        check "  it settles" settled
        screen >"$TMP/compare.txt"
        check "${cols}x$rows LANG=C compare view: lambda1 and lambda1->0 stand whole" labels_apart "$TMP/compare.txt"
        check "  (lambda1->0 is there)" grep -q "lambda1->0" "$TMP/compare.txt"
    fi
    quits "${cols}x$rows: q quits"
done
finish
