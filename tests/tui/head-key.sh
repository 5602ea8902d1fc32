#!/bin/bash
# With two heads, `}` shows the other head's attention matrix of a network the worker keeps:
# the job recomputes that matrix and its eigenvalues (a dgeev), and the worker's estimate of
# it (the trace's job-estimate) prices that work instead of nothing (issue 21: the plan
# matched kept spectra without the head).  `{` returns to the first head, whose spectra
# are kept: that job computes nothing.  No timing decides the outcome, only whether the
# estimate is zero.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/head-key.trace
# The estimate of job number n (the trace's generations count from 1).
estimate_of() { awk -v g="gen=$1" '/job-estimate/ && $0 ~ g" " { sub(/.*s=/, ""); print; exit }' "$trace"; }
done_job() { wait_trace "job-done gen=$1 "; }
positive() { [ -n "$1" ] && awk -v s="$1" 'BEGIN { exit !(s > 0) }'; }
zero() { [ -n "$1" ] && awk -v s="$1" 'BEGIN { exit !(s == 0) }'; }

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 2 --heads 2 --trace '$trace'"
check "the first job (head 1) is done" done_job 1
press "}: the screen shows head 2" "head=2" '}'
check "}: the job for head 2 is done" done_job 2
check "}: its estimate prices the head's attention and dgeev ($(estimate_of 2) s)" \
    positive "$(estimate_of 2)"
keys '{'
check "{: the screen shows head 1 again" wait_gone "head=2"
check "{: the job for head 1 is done" done_job 3
check "{: head 1's spectra are kept, nothing to price ($(estimate_of 3) s)" zero "$(estimate_of 3)"
quits "q quits"
finish
