#!/bin/bash
# The warning list (!) shows every warning whole, wrapped at words: gpt-oss-20b-small's note
# on sinks (309 characters, cut at 239 while warnings had 240 bytes) ends on screen with its
# last words, and the warning after it is still listed.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset gpt-oss-20b-small"
expect "the preset computes" "computed in [0-9]+ ms"
press "! lists the sinks' note to its last words" "the sink \(T \+ 1 outcomes\)|the sink \(T \+ 1$" "!"
expect "  ... its middle wrapped, not cut" "the predicted outlier and the Markov laws"
expect "the warning after it is listed too" "RoPE: on identical \(collapsed\) tokens"
keys Escape
check "Esc closes the list" wait_gone "warnings of the shown result"
quits "q quits"
finish
