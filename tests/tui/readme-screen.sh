#!/bin/bash
# The README's sample screen ("## The screen") is the program's real screen for the command
# it states (build/attnscope at 100×32), line for line, but the time the job took: a change
# of layout or of the numbers fails here until the README shows it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

sample=$TMP/readme.txt
captured=$TMP/screen.txt
# The first fenced block after the line that names the command.
awk '/^`make run` \(or `build\/attnscope`\) opens/ { on = 1; next }
     on && /^```$/ { if (++fence == 2) exit; next }
     on && fence == 1' README.md | sed -e 's/ *$//' -e 's/computed in [0-9]* ms */computed in N ms  /' >"$sample"
check "the README has the sample screen" test "$(wc -l <"$sample")" -eq 32

start 100 32 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN'"
expect "the default is computed" "computed in [0-9]+ ms"
# The time and the padding after it (which shrinks as the time gains digits) are the machine's.
screen | sed -e 's/ *$//' -e 's/computed in [0-9]* ms */computed in N ms  /' >"$captured"
if diff "$sample" "$captured" >"$TMP/diff.txt"; then
    ok "the README's sample is the screen"
else
    not_ok "the README's sample is the screen (diff README screen)" "$TMP/diff.txt"
fi
quits "q quits"
finish
