#!/bin/bash
# The preset picker at 80×24 shows the selected preset's path by its end (the file's name,
# which tells presets apart), after an ellipsis where the whole path does not fit.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' XDG_CONFIG_HOME='$TMP/picker' '$BIN' -T 32 -d 32 -L 3"
expect "the screen computes" "computed in [0-9]+ ms"
press "P opens the picker" "presets \([0-9]+\): " P
expect "the path's end: the file's name, after an ellipsis" "…[^ ]*01-one-matrix-has-a-gap\.preset"
keys Escape
check "Esc closes the picker" wait_gone "presets \([0-9]+\): "
quits "q quits"
finish
