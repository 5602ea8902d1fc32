#!/bin/bash
# The conditioning compare view at 80×24: each panel's title is one row ("normal: κ(K)
# Lanczos, nulls (!)" and cutting-skip's beside it), so that both plots start on the row under
# them; the right title had wrapped ("… nulls" / "(!)"), shifting its plot down one row.  Both
# orders of the pair: either initialisation on the right.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# The second row of the screen is the top of both plots: an axis in each 40-column half.
plots_on_row_two() {
    screen | sed -n 2p | python3 -c '
import re, sys
line = sys.stdin.read().rstrip("\n").ljust(80)
sys.exit(0 if all(re.match(r"^ *[-0-9.e+]*[│┤]", half) for half in (line[:40], line[40:80])) else 1)'
}

for init in normal cutting-skip; do
    start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 4 -n rms --init $init --conditioning-path lanczos --no-confirm"
    expect "$init: computes" "computed in [0-9]+ ms"
    press "$init: V, the conditioning view" "κ\(K\)" V
    press "$init: c, the compare view's titles side by side" "normal: κ\(K\).*cutting-skip: κ\(K\)" c
    expect "$init: its result" "computed in [0-9]+ ms"
    if plots_on_row_two; then
        ok "$init: both titles one row, both plots from the row under them"
    else
        screen >"$TMP/screen.txt"
        not_ok "$init: a title took two rows" "$TMP/screen.txt"
    fi
    quits "$init: q quits"
done
finish
