#!/bin/bash
# The compare view (c) at every size: its eigenvalue panels keep at least 12 rows (the minimum
# view.c states, COMPARE_PANEL_ROWS_MIN) and 5 plot rows.  Where its two rows of panels do not
# fit (80x24), the lower row (the stable ranks) goes, a line says how to see it, and z still
# shows each panel alone; at 100x30 and 120x40 all four are drawn.  The panels' places come
# from the trace's frame line, the plot rows from the screen (lib.sh).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

PANEL_ROWS_MIN=12
PLOT_ROWS_MIN=5

for run in "80 24 2" "100 30 4" "120 40 4"; do
    read -r cols rows expected <<<"$run"
    trace="$TMP/compare-$cols-$rows.trace"
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 3 --trace '$trace'"
    what="${cols}x$rows compare"
    check "$what: the screen settles" settled
    press "$what: c" "compare view on" c
    check "$what: it settles" settled
    check "$what: $expected panels drawn" count_is "$expected"
    check "$what: every panel drawn is at least $PANEL_ROWS_MIN rows tall" panels_tall
    check "$what: every panel drawn has at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
    if [ "$expected" = 2 ]; then
        expect "$what: a line says the stable ranks are hidden, and how to see them" \
            "2 of 4 panels at this height \($PANEL_ROWS_MIN rows each\): z shows each alone"
        check "$what: the stable ranks are the ones hidden" absent "stable rank sr"
        press "$what: z, z shows the first stable-rank panel alone" "panel 2 of 4 full screen" z z
        check "$what: its title is on screen" wait_for "stable rank sr"
        check "$what: it settles" settled
        check "$what: it is at least $PANEL_ROWS_MIN rows tall" panels_tall
        check "$what: with at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
    else
        check "$what: no line about hidden panels" absent "panels at this height"
        expect "$what: the stable ranks are drawn" "stable rank sr"
    fi
    quits "$what: q quits"
done
finish
