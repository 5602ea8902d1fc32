#!/bin/bash
# The conditioning's warnings belong to the conditioning view: after it, the stable rank's
# status counts none of them and the list ! opens holds none of them, as before it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 64 -L 4 --no-confirm"
expect "the stable rank is computed" "computed in [0-9]+ ms"
expect "with no warning about it" "\? help  q quit"
press "V: the conditioning view, with its warnings" "view: conditioning.*! [0-9]+ warnings?  \? help" V
expect "the conditioning is computed" "computed in [0-9]+ ms.*! [0-9]+ warnings?  \? help"
press "v: the stable rank again, with no warning about the conditioning" "view: stable rank.*\? help  q quit" v
press "! lists none of the conditioning's warnings" "warnings of the shown result \(0\)" "!"
expect "and says so" "none: nothing to warn about"
press "Esc closes it; V: the conditioning view again" "view: conditioning" Escape V
press "! there lists the conditioning's warnings" "warnings of the shown result \([1-9][0-9]*\)" "!"
keys Escape
check "Esc closes it" wait_gone "warnings of the shown result"
quits "q quits"
finish
