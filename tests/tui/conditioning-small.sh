#!/bin/bash
# The conditioning panel at 100×30 and 80×24: it drew only the network's three curves and no
# note (any panel under 16 rows was "compact"), so the counterpart's curves, the shown layer's
# numbers and the nulls vanished without a word.  Now it draws what fits, with its plot kept at
# 5 rows or more, and one line says what is left out.  At 100×30 the counterpart's proved bounds
# (▵) are drawn (batch, an independent account, has them at every layer) and the shown layer's
# readout is batch's bound; at 80×24 the line names the counterpart and the notes, which z
# (the panel on the whole screen) then shows.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

json=$TMP/batch.json
check "batch: the default conditioning" bash -c "'$BIN' --batch --conditioning >'$json'"
read -r bound counterpart_bounds <<<"$(python3 -c 'import json, sys
k = json.load(open(sys.argv[1]))["conditioning"]
assert k["kappa_jacobian"][0] is None and k["kappa_jacobian_lower"][0] is not None
bounds = [b for v, b in zip(k["counterpart_kappa_jacobian"], k["counterpart_kappa_jacobian_lower"]) if v is None and b is not None]
print("%.3g" % k["kappa_jacobian_lower"][0], len(bounds))' "$json")"
check "  kappa(K) null with a proved bound at layer 1 ($bound), and the counterpart's at $counterpart_bounds layers" \
    test -n "$bound" -a "${counterpart_bounds:-0}" -gt 0

# The κ panel's rows (the third panel of the conditioning view), from the last frame.
kappa_panel() { # screen-file: its rows and columns inside the panel
    read -r _ rows cols row col <<<"$(panels_of_last_frame | awk '$1 == 3')"
    python3 -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
rows, cols, row, col = map(int, sys.argv[2:])
for l in lines[row:row + rows]:
    print(l[col:col + cols])' "$1" "$rows" "$cols" "$row" "$col"
}
plot_rows() { grep -cE '^ *[0-9e.+]*[┤│]' "$1"; } # a panel's rows with a y axis cell

trace=$TMP/small.trace
start 100 30 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --trace '$trace'"
expect "100×30: the default screen" "^T=256 +d=256"
keys V
if final_screen "$TMP/v100.txt" "κ\(K\)"; then ok "  V: the conditioning view"; else not_ok "  V: the conditioning view" "$TMP/v100.txt.why"; fi
kappa_panel "$TMP/v100.txt" >"$TMP/k100.txt"
check "  the legend names the counterpart's curves" grep -q "▵⠄ K≥ (gap center)" "$TMP/k100.txt"
check "  its bounds are drawn (▵ beside the legend's)" test "$(grep -o "▵" "$TMP/k100.txt" | wc -l)" -ge 2
check "  the shown layer's readout, batch's bound" grep -q "ℓ=1: κ(K)≥$bound " "$TMP/k100.txt"
check "  one line says what is left out" grep -q "left out: the path, nulls (z zooms)" "$TMP/k100.txt"
check "  the plot keeps 5 rows or more" test "$(plot_rows "$TMP/k100.txt")" -ge 5
quits "  q quits"

trace=$TMP/small80.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --trace '$trace'"
expect "80×24: the default screen" "^T=256 +d=256"
keys V
if final_screen "$TMP/v80.txt" "κ\(K\)"; then ok "  V: the conditioning view"; else not_ok "  V: the conditioning view" "$TMP/v80.txt.why"; fi
kappa_panel "$TMP/v80.txt" >"$TMP/k80.txt"
check "  one line says the counterpart and the notes are left out" grep -q "left out: counterpart, notes (z zooms)" "$TMP/k80.txt"
check "  the plot keeps 5 rows or more" test "$(plot_rows "$TMP/k80.txt")" -ge 5
press "  z z z: the κ panel on the whole screen, with its notes" "ℓ=1: κ\(K\)≥" z z z
expect "  and the counterpart's curves" "K≥ \(gap center\)|κ\(K\) ≥ \(gap center\)"
quits "  q quits"
finish
