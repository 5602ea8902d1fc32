#!/bin/bash
# Presentation mode at every size (issue 27): no panel is drawn below 14 rows (the minimum
# view.c states) and each keeps at least 5 plot rows.  Where two rows of panels do not fit,
# the lower row goes (the histogram here), the note's border (or a line of its own) says how
# to see it, and z still shows each panel alone.  Checked at 80x24, 100x30 and 120x40, on the
# tour's first step (its note takes rows of its own) and without a note, and in the compare
# view at 100x30.  The panels' places come from the trace's frame line; the plot rows are
# counted on the screen itself: the rows of a panel whose cell in the y axis's column (the
# column of its └ corner) is │ or ┤.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

PANEL_ROWS_MIN=14
PLOT_ROWS_MIN=5
STEP1="$(pwd)/presets/tour/01-one-matrix-has-a-gap.preset"

# size note(yes|no) panels-expected
for run in "80 24 yes 2" "100 30 yes 2" "120 40 yes 3" "80 24 no 2" "100 30 no 2" "120 40 no 3"; do
    read -r cols rows note expected <<<"$run"
    trace="$TMP/present-$cols-$rows-$note.trace"
    args="-T 64 -d 64 -L 3"
    [ "$note" = yes ] && args="--preset '$STEP1' --no-confirm"
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $args --present --trace '$trace'"
    what="${cols}x$rows $([ "$note" = yes ] && echo "tour step 1" || echo "no note")"
    check "$what: the screen settles" settled
    [ "$note" = yes ] && expect "$what: the tour's note is on screen" "Point at:"
    check "$what: every panel drawn is at least $PANEL_ROWS_MIN rows tall" panels_tall
    check "$what: every panel drawn has at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
    check "$what: $expected panels drawn" count_is "$expected"
    if [ "$expected" = 2 ]; then
        expect "$what: a line says some are hidden, and how to see them" \
            "2 of 3 panels at this height \($PANEL_ROWS_MIN rows each\): z shows each alone"
        check "$what: the histogram is the one hidden" absent "singular values √T·s"
        press "$what: z, z shows the histogram alone" "panel 2 of 3 full screen" z z
        check "$what: its title is on screen" wait_for "singular values √T·s"
        check "$what: it settles" settled
        check "$what: it is at least $PANEL_ROWS_MIN rows tall" panels_tall
        check "$what: with at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
        press "$what: z, z: every panel again, the line too" "2 of 3 panels at this height" z z
    else
        check "$what: no line about hidden panels" absent "panels at this height"
        expect "$what: the histogram is drawn" "singular values √T·s"
    fi
    quits "$what: q quits"
done

# The compare view's four panels at 100x30: its lower row (the stable ranks) goes.
trace="$TMP/present-compare.trace"
start 100 30 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 3 --present --trace '$trace'"
check "100x30 compare: the screen settles" settled
press "100x30 compare: c" "2 of 4 panels at this height \($PANEL_ROWS_MIN rows each\)" c
check "100x30 compare: it settles" settled
check "100x30 compare: 2 panels drawn" count_is 2
check "100x30 compare: each at least $PANEL_ROWS_MIN rows tall" panels_tall
check "100x30 compare: with at least $PLOT_ROWS_MIN plot rows" plot_rows_ok
check "100x30 compare: the stable ranks are the ones hidden" absent "stable rank sr"
quits "100x30 compare: q quits"
finish
