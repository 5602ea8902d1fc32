#!/bin/bash
# The identity preset at 80×24, whose status takes six lines: its stable-rank panel is drawn
# (the histogram above it keeps 7 rows, where half of the rows had left it "(panel too
# small)"), and in the entropy view mean H = 0 is drawn on the row labelled 0 (a short axis
# had labelled that row 2, the label above it taking the row).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# The plot row holding the entropy curve's markers (◉: network and counterpart on each
# other) is labelled 0.
zero_row_labelled_zero() {
    screen | grep "◉" | grep -qE "^.* 0┤◉"
}

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset identity --no-confirm"
expect "computes" "computed in [0-9]+ ms"
expect "the stable-rank panel's title" "stable rank sr\(Σℓ\) against depth"
check "... and its plot: not too small" absent "panel too small"
expect "... its curve drawn" "[0-9]┤◉"
press "v v v v: the entropy view" "row entropy H \(nats\) against depth" v v v v
if wait_for "◉" && zero_row_labelled_zero; then
    ok "mean H = 0 is drawn on the row labelled 0"
else
    screen >"$TMP/screen.txt"
    not_ok "mean H = 0 is drawn on a row labelled otherwise" "$TMP/screen.txt"
fi
quits "q quits"
finish
