#!/bin/bash
# OpenBLAS under an address-space limit (issue 26: 3).  OpenBLAS takes a 128 MiB buffer per
# thread that calls it, and per thread of its pool when it loads, and retries for ever when
# one does not fit: `ulimit -v 300000; attnscope --batch -T 128 -d 128 -L 4` spun a core at
# 54 %, and at 150 000 the screen never drew.  Now the program runs with OpenBLAS's pool off
# under a limit and reserves the buffers it needs before computing: it computes (one lane at
# a time where two buffers do not fit) or says it is out of memory and exits 1.  The limits
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
        grep -q "attnscope: out of memory: the address-space limit (ulimit -v) leaves no room for OpenBLAS's buffers" "$tmp/err" ||
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
    says_out_of_memory $?
}
check "ulimit -v 150000: out of memory for OpenBLAS's buffers, exit 1, nothing on stdout" batch_refused
jsonl_refused() {
    echo '{"T": 8, "d": 8, "depth": 1}' >"$tmp/in"
    timeout 60 bash -c 'ulimit -v 150000; exec "$1" --batch --jsonl' _ "$BIN" <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
    says_out_of_memory $?
}
check "... --jsonl too" jsonl_refused
screen_refused() { # before the terminal is looked at, so no terminal is needed
    limited 150000 -T 128 -d 128 -L 4
    says_out_of_memory $?
}
check "ulimit -v 150000: the screen says so and exits 1 instead of never drawing" screen_refused
user_threads() { # the user's OPENBLAS_NUM_THREADS is kept; the check holds for it too
    OPENBLAS_NUM_THREADS=1 limited 150000 --batch -T 128 -d 128 -L 4
    says_out_of_memory $?
}
check "OPENBLAS_NUM_THREADS=1 under ulimit -v 150000: the same message" user_threads
finish
