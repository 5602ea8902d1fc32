#!/bin/bash
# ASCII at 80×24 (TERM=linux, LANG=C), where the spellings are longer (sqrtT*lambda): the
# two panels' titles stay apart (a title wraps two columns short of its panel, where the
# eigenvalues' had filled its 36 and run into the histogram's: "…of A, l=1, singular
# values…"), and a legend item cut across rows keeps them to itself ("off scale" had been
# followed on its row by ".. |z| = sigma = 1.31").
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 80 24 "env TERM=linux LANG=C LC_ALL=C '$BIN'"
expect "computes" "computed in [0-9]+ ms"
expect "the eigenvalue panel's title" "^eigenvalues sqrtT\*lambda of A, +singular values"
check "... at least two blank columns before the next title" shows "A, {3,}singular values"
check "... the shown layer and T together on its second row" shows "^l=1, T=256 "
expect "the cut legend item's end" "^off scale +[^ ]"
check "... alone on its row of the panel" absent "^off scale +\.\. \|z\|"
expect "... the next item on a row of its own" "^\.\. \|z\| = sigma = 1\.31"
quits "q quits"
finish
