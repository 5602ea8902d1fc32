#!/bin/bash
# At 80x24 every view of the main panel draws a plot, not "(panel too small)": the width sweep
# (whose legend notes go first where its panel is short, as the stable-rank panel's note does),
# the gradient norms, the token similarity and the entropy, each panel with at least 3 plot rows
# (the panels' places from the trace's frame line, the plot rows from the screen: lib.sh).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

PLOT_ROWS_MIN=3
trace=$TMP/small.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 4 --trace '$trace'"
check "80x24: the screen settles" settled
# view key, a pattern of the panel's title, one of its drawn plot (legend or axis name)
for view in "width sweep: sr|gap off" "gradient norm|network \(gap off\)" \
    "token similarity|network \(gap off\)" "row entropies|ln n|ln T"; do
    title=${view%%|*}
    press "v: the $title view" "$title" v
    check "  it settles" settled
    expect "  its plot is drawn" "${view#*|}"
    check "  nothing says the panel is too small" absent "panel too small"
    check "  every panel has at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
done
quits "q quits"
finish
