#!/bin/bash
# Readouts that say what the numbers say: a value the batch document writes as null is
# "n/a" on the screen with the reason, never "nan" or "inf" (the width sweep's fitted slope
# at layer 8, where no gap-off point is resolved); without colour or Unicode the entropy
# view's ceiling and Zhai et al.'s bound have legend marks of their own; the row-entropy
# histogram's title names the bound of rows a window mask cuts to 9 keys (ln 9 = 2.2), not
# ln T; the compare view's λ1→0 sits by the ◎ it names, in presentation mode too, at 100×30
# and 120×40 (it sat on the circle's border, rows above); under a causal mask with the gap
# removed the two networks' curves meet from layer 5 on, and where the ● lands on the ○ the
# cell shows ◉, which the ○ entry of the legend names (the ○ was hidden there); the window
# mask's note gives a limit only where its formula holds.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# The document first: at layer 8 both slopes are null (fewer than two resolved points; the
# gap-removed points at T = 64 and 256 are round-off, null: docs/model.md §2, "Round-off from a
# layer on").  The screen is checked against this, not against itself.
"$BIN" --batch --layer 8 --sweep-T >"$TMP/sweep.json"
check "--batch --layer 8 --sweep-T: both slopes null, the round-off points null" \
    "$PY" -c "
import json, sys
w = json.load(open(sys.argv[1]))['width_sweep']
ok = w['slope'] is None and w['slope_gap'] is None
ok = ok and w['stable_rank_minus_one_gap'][2] is None and w['stable_rank_minus_one_gap'][4] is None
sys.exit(0 if ok else 1)" "$TMP/sweep.json"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --layer 8"
expect "the default network at layer 8 computes" "computed in [0-9]+ ms"
press "v: the width sweep arrives with its fitted slopes" "fitted slopes" v
expect "the null slopes read n/a" "fitted slopes n/a \(gap off\), n/a \(removed\)"
expect "... with the reason the document's null has" "n/a: fewer"
check "no nan or inf anywhere on the screen" absent "\b(nan|inf)\b"
quits "q quits"

start 120 40 "env NO_COLOR=1 LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --ascii -m window-causal -w 8 -L 4"
expect "window-causal, w = 8, computes" "computed in [0-9]+ ms"
press "v four times: the entropy view" "row entropy H \(nats\) against depth" v v v v
expect "the ceiling under a mask is the mean ln n_i, its mark dots alone" "\.\.\. mean ln n_i"
expect "the Zhai bound has a mark of its own" "\.x\. Zhai bound"
check "no other legend entry shares the bound's mark" absent "\.\.\. Zhai bound"
expect "the histogram's title: the largest ln n_i of rows of at most 9 keys" \
    "row entropies H_i, l=1 \(max ln n_i = 2\.2\)"
check "not ln T, which no row reaches" absent "row entropies H_i, l=1 \(ln T"
quits "q quits the entropy view"

# Whether the label λ1→0 on the screen in $1 sits by its ◎: on its row, or one above or below,
# touching its column.  The legend's "◎ λ1: 1 → 0" is no label.
label_by_its_point() {
    python3 - "$1" <<'EOF2'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
marks = [(r, l.index("◎")) for r, l in enumerate(lines) if "◎" in l and "◎ λ1: 1" not in l]
labels = [(r, l.index("λ1→0")) for r, l in enumerate(lines) if "λ1→0" in l]
if len(marks) != 1 or len(labels) != 1:
    print("    # marks %s, labels %s" % (marks, labels))
    sys.exit(1)
(mr, mc), (lr, lc) = marks[0], labels[0]
width = len("λ1→0")
beside = lr == mr and (lc == mc + 1 or lc + width == mc)
over = abs(lr - mr) == 1 and lc <= mc + 1 and lc + width >= mc
if not (beside or over):
    print("    # ◎ at row %d col %d, λ1→0 at row %d col %d" % (mr, mc, lr, lc))
sys.exit(0 if beside or over else 1)
EOF2
}

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --mask causal --gap center"
expect "causal, gap center, computes" "computed in [0-9]+ ms"
expect "the stable-rank curves meet: ◉ in the plot" "┤.*◉.*◉"
expect "the ○ entry of the legend says what ◉ is" "counterpart \(gap off\), ◉ on ●"
press "v v: the gradient norms, whose curves do not meet, keep their plain legend" \
    "gradient norm" v v
check "  no ◉ there" absent "◉"
quits "q quits the causal run"

for size in "100 30" "120 40"; do
    read -r cols rows <<<"$size"
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN'"
    expect "${cols}x$rows: the default computes" "computed in [0-9]+ ms"
    press "${cols}x$rows: c, the compare view" "compare view on" c
    expect "  its gap-removed half marks λ1 at 0" "◎ λ1: 1 → 0"
    screen >"$TMP/compare.txt"
    check "  λ1→0 by its ◎" label_by_its_point "$TMP/compare.txt"
    press "${cols}x$rows: Z, presentation mode" "presentation mode on" Z
    expect "  the mark is still there" "◎ λ1: 1 → 0"
    screen >"$TMP/present.txt"
    check "  λ1→0 by its ◎ among the whole-cell points" label_by_its_point "$TMP/present.txt"
    quits "${cols}x$rows: q quits"
done

# The window mask's note gives 1 − |λ2| at σ_qk → 0 as ≈ where the formula holds (w = 4,
# T = 64: numpy's exact 0.0086, docs/model.md §3), and no number past 2w + 1 ≤ T/2, where the
# formula's 0.54 is not the exact 0.409 and that limit has a gap.
start 200 50 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 2 -m window -w 4"
expect "window, w = 4, T = 64: 1 − |λ2| ≈ 0.0086, the formula named with T′" \
    "window mask: 1 − \|λ2\| ≈ 0\.0086 as σ_qk → 0 \(π²w\(w\+1\)/\(6T′²\)\)"
quits "window, w = 4: q quits"
start 200 50 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 2 -m window -w 28"
expect "window, w = 28, T = 64: the note says the limit is not given in closed form" \
    "1 − \|λ2\| as σ_qk → 0 is not given in closed form for a window this wide"
check "... and claims no number, nor that there is no gap" absent "0\.54|there is no spectral gap"
quits "window, w = 28: q quits"

finish
