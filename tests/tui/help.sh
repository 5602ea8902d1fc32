#!/bin/bash
# The help is read whole at any size: at 120×40 every key on one page; at 80×24, where the
# paired lines would be cut in three columns, two columns that hold every line whole on
# pages that Space and PgDn/PgUp turn (round), and Esc closes it at any page.  Every session
# ends with q and checks the exit status.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2 --no-confirm"
expect "120x40: computes" "computed in [0-9]+ ms"
press "120x40: ? opens the help on one page" "Esc, \? or q closes this help" "?"
check "120x40: no page count" absent "page [0-9]+ of"
check "120x40: the last key is there" wait_for "q {2,}quit"
keys Escape
quits "120x40: Esc closes the help, q quits"

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2 --no-confirm"
expect "80x24: computes" "computed in [0-9]+ ms"
press "80x24: ? opens the help's first page" "page 1 of 2, Space turns" "?"
check "80x24: a paired line whole (not cut to 8 columns)" wait_for "a A +attention kind next\|previous"
check "80x24: the first page leaves the last keys for the next" absent "q {2,}quit"
press "80x24: Space turns to the second page" "page 2 of 2, Space turns" Space
expect "80x24: the last key is on it" "q {2,}quit"
check "80x24: the first key is not" absent "T t +tokens"
press "80x24: PgDn turns round to the first" "page 1 of 2" NPage
press "80x24: PgUp turns back to the second" "page 2 of 2" PPage
keys Escape
check "80x24: Esc closes it at any page" wait_gone "attnscope keys"
press "80x24: ? opens it again at the first page" "page 1 of 2" "?"
keys q
check "80x24: q closes it" wait_gone "attnscope keys"
quits "80x24: q quits"
finish
