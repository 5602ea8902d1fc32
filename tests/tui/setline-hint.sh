#!/bin/bash
# What the : line says around what is typed: Tab's hint (what the completed setting accepts and
# its value now) goes at the next edit and at Enter's refusal, so that it never stands over a
# line it no longer describes; on 80 columns a long description is shortened with an ellipsis,
# never the value; and on a terminal below the minimum size the message says how to leave
# while the line takes the keys (Esc closes it: q is typed into it), and q again once it is
# closed.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/setline-hint.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 1 --no-confirm --trace '$trace'"
expect "computes" "computed in [0-9]+ ms"
check "  and settles" settled

# A refusal: the hint of "heads 3" goes, the reason stays.
keys ":"
keys -l "heads 3"
expect "the line holds what was typed" ":heads 3_"
press "Tab on a number shows what --heads accepts" "--heads H: attention heads" Tab
press "Enter refuses 3 heads of d = 16" "accepted a divisor of" Enter
check "  the hint is gone: it spoke of the line before Enter" absent "--heads H: attention heads"
check "  the line stays open with its text" shows ":heads 3_"
keys Escape
wait_gone ":heads 3_" >/dev/null

# An edit: the cycle's hint goes with the first key after Tab.
keys ":"
keys -l "hea"
press "Tab cycles through the names that start so" "1 of 3 \(Tab: next\): --heads H" Tab
press "typing after it takes the hint away" ":heads 3_" " " 3
check "  no hint left" absent "Tab: next"
press "Enter's refusal says why, alone" "accepted a divisor of" Enter
check "  still no hint" absent "--heads H: attention heads"
keys Escape
wait_gone ":heads 3_" >/dev/null

# A long description on 80 columns: cut before what is accepted and the value now.
keys ":"
keys -l "window-l"
press "Tab on window-layers shows its value now" "now all" Tab
hint_rows() { # the two rows between the line and "Enter sets", inside the box
    screen | /usr/bin/python3 -c '
import sys
rows = [r.strip(" │") for r in sys.stdin.read().split("\n")]
at = next(i for i, r in enumerate(rows) if r.startswith(":window-layers"))
print(rows[at + 1] + " " + rows[at + 2])
print(rows[at + 3])
'
}
hint_rows >"$TMP/hint"
check "  the hint starts with the setting's description" \
    grep -q "^--window-layers P: layers with the window mask" "$TMP/hint"
check "  shortened with an ellipsis before what it accepts, whole" \
    grep -qE "…; accepted up to [0-9]+ layers; now all *$" "$TMP/hint"
check "  the keys' line follows it" grep -q "^Enter sets; Esc cancels" "$TMP/hint"
press "Tab again: the first value, its value now still shown" ":window-layers all_" Tab
check "  the count of values, the value now" poll_until "$TIMEOUT" 0.1 shows "now all"
keys Escape
wait_gone ":window-layers" >/dev/null

# Too small a terminal with the line open: Esc closes it, then q quits.
keys ":"
wait_for ":_" >/dev/null
check "before the resize no size message" absent "this terminal is"
tm resize-window -t 0 -x 30 -y 10
expect "at 30×10 the size message says Esc closes the line" "Esc closes the"
check "  and not that q quits (q would be typed)" absent "press q to quit"
check "  the line on the last row" test "$(screen | tail -n 1)" = ":_"
press "q is typed into the line" ":q_" q
check "  the screen still runs" test ! -s "$EXIT_FILE"
tm resize-window -t 0 -x 12 -y 4
expect "at 12×4 the brief form says it too" "Esc closes"
check "  not 'q quits'" absent "q quits"
check "  above the line on the last row" test "$(screen | tail -n 1)" = ":q_"
press "Esc closes the line: now q quits, as the brief form says" "q quits" Escape
check "  the line is gone" absent ":q_"
tm resize-window -t 0 -x 30 -y 10
expect "at 30×10 the full form says so too" "press q to"
check "  no word of Esc" absent "Esc closes"
quits "q quits"
finish
