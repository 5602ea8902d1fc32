#!/bin/bash
# Presentation mode's note points only at what is drawn: at 80×24 the histogram is left out
# (two of three panels at this height), and tour step 2's "(2) the stray bar of the
# histogram is gone" is left out of its note with it, (1) and (3) kept; at 120×40, where the
# histogram is drawn, the note names it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

step=presets/tour/02-remove-the-gap.preset
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset $step --no-confirm"
expect "80x24: computes" "computed in [0-9]+ ms"
press "80x24: Z, the note's box, the histogram left out" "2 of 3 panels at this height" Z
expect "  the note's first item" "Point at: \(1\) the outlier is gone"
expect "  its item about the stable rank follows it" "~0.09; \(3\) the stable rank"
check "  the item about the histogram is left out" absent "stray bar|\(2\)"
quits "80x24: q quits"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset $step --no-confirm"
expect "120x40: computes" "computed in [0-9]+ ms"
press "120x40: Z, the note with every panel drawn names the histogram" \
    "\(2\) the stray bar" Z
quits "120x40: q quits"
finish
