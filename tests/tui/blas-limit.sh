#!/bin/bash
# The screen under an address-space limit where one of OpenBLAS's buffers fits and two do not
# (ulimit -v 300000, the limit at which tests/cli/blas-limits.sh's batch computes on one
# lane).  The screen exited 1 there at start ("out of memory ... for each of 2"); now it runs
# on one lane, as batch does: the network and its counterpart in turn, said on the status
# line and in full on stderr, with the numbers the unlimited screen shows, its jobs priced as
# one lane (the first job's estimate above the same job's on two lanes), and keys computing.
# Skipped under AddressSanitizer, which cannot run under ulimit -v.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

if grep -qa __asan_init "$BIN"; then
    skip "the screen under ulimit -v" "AddressSanitizer cannot run under ulimit -v"
    finish
    exit
fi

readouts() { screen | grep -E '^σ='; }
estimate_of() { awk '/job-estimate/ && / gen=1 / { sub(/.*s=/, ""); print; exit }' "$1"; }
above() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
settings="-T 128 -d 128 -L 4"
export ATTNSCOPE_GFLOPS=10 # the cost model's rate pinned: the estimates compare lanes, not machines

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --trace '$TMP/free.trace'"
expect "without a limit: the first job is computed" "computed in"
free_readouts=$(readouts)
quits "without a limit: q quits"

start 80 24 "bash -c 'ulimit -v 300000; exec env LANG=$UTF8 LC_ALL=$UTF8 \"\$0\" $settings --trace \"\$1\"' '$BIN' '$TMP/limited.trace' 2>'$TMP/err'"
expect "ulimit -v 300000: the screen draws and computes" "computed in"
expect "... its status line says it runs on one lane" "one lane: ulimit -v fits one BLAS buffer"
check "... stderr says why in full" grep -q "room for one of OpenBLAS's buffers (129 MiB), not two" "$TMP/err"
check "... the numbers are the unlimited screen's ($free_readouts)" test "$(readouts)" = "$free_readouts"
check "... the first job is priced as one lane: $(estimate_of "$TMP/limited.trace") s above $(estimate_of "$TMP/free.trace") s on two" \
    above "$(estimate_of "$TMP/limited.trace")" "$(estimate_of "$TMP/free.trace")"
press "... a key computes on one lane too: ] shows layer 2" "layer=2/4" ']'
quits "... q quits"
finish
