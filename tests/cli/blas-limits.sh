#!/bin/bash
# OpenBLAS under an address-space limit (issue 26: 3).  OpenBLAS takes a 128 MiB buffer per
# thread that calls it, and per thread of its pool when it loads, and retries for ever when
# one does not fit: `ulimit -v 300000; attnscope --batch -T 128 -d 128 -L 4` spun a core at
# 54 %, and at 150 000 the screen never drew.  Now the program runs with OpenBLAS's pool off
# under a limit and reserves the buffers it needs before computing: it computes (one lane at
# a time where two buffers do not fit), or is refused for the limit by the default memory
# budget (exit 2), or with --max-memory says it is out of memory and exits 1.  The limits
# sit ~100 MiB from either edge (the binary and its libraries take ~50 MiB), so the outcome
# does not depend on this machine.  Skipped under AddressSanitizer, which cannot run under
# ulimit -v.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

skip_script_under_asan "OpenBLAS under ulimit -v"

limited() { # kbytes args...: the status; a hang is 124
    local limit=$1
    shift
    timeout 60 bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$limit" "$BIN" "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
}
says_out_of_memory() {
    [ $1 -eq 1 ] && [ ! -s "$tmp/out" ] &&
        grep -q "attnscope: out of memory: the address-space limit (ulimit -v 150000) leaves no room for OpenBLAS's buffers" "$tmp/err" ||
        { echo "  status $1, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
# The default memory budget counts the buffers under the limit: nothing is left, so the run
# is refused before anything is reserved (exit 2), naming the limit and one that would hold it.
says_refused_for_the_limit() {
    [ $1 -eq 2 ] && [ ! -s "$tmp/out" ] &&
        grep -q "above the memory budget of 0 bytes (set by ulimit -v of 146 MiB, .*; ulimit -v [0-9]* would hold it)" "$tmp/err" ||
        { echo "  status $1, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
computes() {
    limited 300000 --batch -T 128 -d 128 -L 4
    local status=$?
    [ $status -eq 0 ] && "$PY" tests/cli/contract.py 128 4 <"$tmp/out" ||
        { echo "  status $status, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "ulimit -v 300000, T = d = 128, L = 4: the whole document, no spin" computes
batch_refused() {
    limited 150000 --batch -T 128 -d 128 -L 4
    says_refused_for_the_limit $?
}
check "ulimit -v 150000: refused for the limit before computing, exit 2, nothing on stdout" batch_refused
batch_given_budget() { # --max-memory past the limit: OpenBLAS's buffers do not fit, exit 1
    limited 150000 --batch -T 128 -d 128 -L 4 --max-memory 1G
    says_out_of_memory $?
}
check "... with --max-memory: out of memory for OpenBLAS's buffers, exit 1, nothing on stdout" batch_given_budget
jsonl_refused() {
    echo '{"T": 8, "d": 8, "depth": 1}' >"$tmp/in"
    timeout 60 bash -c 'ulimit -v 150000; exec "$1" --batch --jsonl' _ "$BIN" <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
    says_out_of_memory $?
}
check "... --jsonl too" jsonl_refused
screen_refused() { # before the terminal is looked at, so no terminal is needed
    limited 150000 -T 128 -d 128 -L 4
    says_refused_for_the_limit $?
}
check "ulimit -v 150000: the screen is refused for the limit (exit 2) instead of never drawing" screen_refused
user_threads() { # the user's OPENBLAS_NUM_THREADS is kept; the check holds for it too
    OPENBLAS_NUM_THREADS=1 limited 150000 --batch -T 128 -d 128 -L 4
    says_refused_for_the_limit $?
}
check "OPENBLAS_NUM_THREADS=1 under ulimit -v 150000: the same message" user_threads
finish
