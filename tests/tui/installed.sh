#!/bin/bash
# The tour and the picker work wherever the program is: a copy installed with
# `make install DESTDIR=...`, run from a directory without presets, steps through the tour
# (which once said "no tour: presets/tour not found") and lists the tour first in the picker.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
root=$(pwd)
if ! make -s --no-print-directory -C "$root" install BUILD="$(dirname "$BIN")" DESTDIR="$TMP/dest" \
    PREFIX=/usr/local >"$TMP/install.log" 2>&1; then
    not_ok "make install DESTDIR=..." "$TMP/install.log"
    finish
    exit
fi
ok "make install DESTDIR=..."
mkdir -p "$TMP/elsewhere" "$TMP/home"
start 120 40 "cd '$TMP/elsewhere' && env -u ATTNSCOPE_PRESETS -u ATTNSCOPE_TOUR -u XDG_CONFIG_HOME HOME='$TMP/home' LANG=$UTF8 LC_ALL=$UTF8 '$TMP/dest/usr/local/bin/attnscope' -T 32 -d 32 -L 2"
expect "the installed binary computes" "computed in [0-9]+ ms"
press "> loads the tour's first step, outside the source tree" "Tour 1/11: one attention matrix has a gap" ">"
expect "with the step's settings" "T=256"
press "P opens the picker" "presets \([0-9]+\)" P
expect "the tour is first in the picker" "^.*> 01-one-matrix-has-a-gap +tour"
keys Escape
check "Esc closes the picker" wait_gone "presets \([0-9]+\)"
quits "q quits, exit status 0"
finish
