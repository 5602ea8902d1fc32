#!/bin/bash
# The : line is edited at its cursor as a shell's line is: ←/→, Home/End and Ctrl-A/Ctrl-E move
# it, typing inserts there, Backspace and Delete (Ctrl-D) remove around it, Ctrl-K/Ctrl-U/Ctrl-W
# cut to the end, to the start and the word before it, Tab completes the word at it; the
# terminal's cursor is shown where it is (and hidden once the line closes); a line longer than
# its room scrolls sideways on its one row, at 80×24 and on a 20-column terminal (where the
# line is the last row under the size message), and Enter sets the whole line as edited.  A
# refused line is kept in the history: ↑ brings it back to fix.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/setline-edit.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 1 --no-confirm --trace '$trace'"
expect "computes" "computed in [0-9]+ ms"
check "  and settles" settled

cursor() { tm display-message -p -t 0 '#{cursor_x} #{cursor_y} #{cursor_flag}'; }
# The terminal's cursor is visible on the : line's row, `offset` characters after its ':' (the
# first ':' that starts a line of text in the box, or the screen's last row).
cursor_at() { # offset
    local want
    want=$(screen | /usr/bin/python3 -c '
import sys
rows = sys.stdin.read().split("\n")
for y, row in enumerate(rows):
    at = row.find("│ :")
    at = at + 2 if at >= 0 else (0 if row.startswith(":") else -1)
    if at >= 0:
        print(at + 1 + int(sys.argv[1]), y, 1)
        break
' "$1")
    if [ -z "$want" ] || [ "$(cursor)" != "$want" ]; then
        echo "    # cursor $(cursor), wanted $want"
        return 1
    fi
}
cursor_hidden() { [ "$(cursor | cut -d' ' -f3)" = 0 ]; }

check "no cursor on the main screen" cursor_hidden
press ": opens the line" ":_" ":"
check "the cursor is shown after the ':'" cursor_at 0
keys -l "xx seed 9 head-dim 32 layer 1"
expect "typing goes at the end" ":xx seed 9 head-dim 32 layer 1_"
check "  the cursor after it" cursor_at 29
press "Ctrl-W twice cuts the two words before the cursor" ":xx seed 9 head-dim 32 _" C-w C-w
press "Home moves to the start: no end mark" ":xx seed 9 head-dim 32  " Home
check "  the cursor on the first character" cursor_at 0
press "Delete and Ctrl-D remove the characters under the cursor" ": seed 9 head-dim 32  " DC C-d
keys -l "zzz"
press "typing inserts at the cursor, Ctrl-U cuts back to the start" ": seed 9 head-dim 32  " C-u
check "  the cursor back at the start" cursor_at 0
keys Right Right Right Right Right Right Right
check "→ moves one character" cursor_at 7
press "Backspace removes the one before the cursor, typing goes there" \
    ": seed 3 head-dim 32  " BSpace 3
check "  the cursor after it" cursor_at 7
keys End Left Left Left
check "End, then ←" cursor_at 17
press "Ctrl-K cuts to the end" ": seed 3 head-dim _" C-k
keys -l "16"
expect "typing at the end again" ": seed 3 head-dim 16_"
press "Ctrl-A goes to the start: no end mark" ": seed 3 head-dim 16 " C-a
check "  the cursor at the start" cursor_at 0
press "Ctrl-E goes to the end" ": seed 3 head-dim 16_" C-e
check "  the cursor at the end" cursor_at 19
press "Enter sets the line as edited" "set head-dim=16, seed=3" Enter
expect "  the status line shows the seed it set" "seed=3"
check "  its result is in" settled
check "  the line closed: no cursor" cursor_hidden

keys ":"
keys -l "rope-sc linear"
keys Home Right Right Right Right Right Right Right
press "Tab completes the word at the cursor, the text after it kept" ":rope-scaling linear" Tab
check "  the cursor after the completion" cursor_at 12
keys Escape

# A line longer than its row (71 characters at 80 columns) scrolls on that row.
status_rows() { screen | tail -n 4; }
keys ":"
wait_for ":_" >/dev/null
status_rows >"$TMP/status-before"
long="layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 seed 4"
keys -l "$long"
expect "a long line shows its end, where the cursor is" ":layer 1 layer 1 .* seed 4_ "
check "  on one row" test "$(screen | grep -c 'layer 1 layer 1')" = 1
check "  the cursor on the screen at the end" cursor_at 70
status_rows >"$TMP/status-after"
check "  the status rows as they were" cmp -s "$TMP/status-before" "$TMP/status-after"
press "Home scrolls it to its start" ":layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 layer 1 " Home
check "  where its end is not shown" absent "seed 4"
check "  the cursor at the start" cursor_at 0
press "Enter sets the whole line" "set layer=1, seed=4" Enter
expect "  the status line shows it" "seed=4"
check "  its result is in" settled

# On 20 columns the line is the last row, scrolled the same way.
keys ":"
keys -l "layer 1 layer 1 layer 1 layer 1 seed 5"
wait_for "seed 5_" >/dev/null
tm resize-window -t 0 -x 20 -y 24
expect "at 20 columns the line is the last row, its end in view" "this terminal is"
last_row() { screen | tail -n 1; }
check "  the end of the line on the last row, in 20 columns" test "$(last_row)" = ":r 1 layer 1 seed 5_"
check "  on that row only" test "$(screen | grep -c 'layer 1')" = 1
check "  the cursor at its end" cursor_at 18
keys Home
last_row_is() { [ "$(last_row)" = "$1" ]; }
check "Home: the start in view" poll_until "$TIMEOUT" 0.1 last_row_is ":layer 1 layer 1 lay"
check "  the cursor at the start" cursor_at 0
keys Enter
tm resize-window -t 0 -x 80 -y 24
expect "Enter there sets the whole line" "set layer=1, seed=5"
expect "  the status line shows it" "seed=5"
check "  its result is in" settled

# A refused line stays in the history.
keys ":"
keys -l "seed 6x"
press "a refused line says why" "nothing set|accepted" Enter
keys Escape
wait_gone ":seed 6x_" >/dev/null
keys ":"
press "↑ on a new line brings the refused one back" ":seed 6x_" Up
keys BSpace
press "fixed, Enter sets it" "set seed=6" Enter
expect "  the status line shows it" "seed=6"
quits "q quits"
finish
