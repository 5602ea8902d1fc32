#!/bin/bash
# Allocation failure (issue 5): under an address-space limit (ulimit -v) below what a
# configuration needs, yet within --max-memory, batch mode says it is out of memory for
# that configuration, exits 1 and writes nothing: no JSON, no --export directory.
# OpenBLAS runs single-threaded here: each of its threads needs a 128 MiB buffer, and a
# thread that cannot get one retries forever inside the library.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

skip_script_under_asan "attnscope under ulimit -v"

limited() { # kbytes args...
    local limit=$1
    shift
    timeout 120 bash -c 'ulimit -v "$1"; shift; exec env OPENBLAS_NUM_THREADS=1 "$@"' _ \
        "$limit" "$BIN" --batch --max-memory 100G "$@" >"$tmp/out" 2>"$tmp/err"
}
out_of_memory() { # args...
    limited 300000 "$@"
    local status=$?
    [ $status -eq 1 ] && [ ! -s "$tmp/out" ] &&
        grep -q "attnscope: out of memory for T = 2048, d = 2048, depth 2" "$tmp/err" ||
        { echo "  status $status, $(wc -c <"$tmp/out") bytes on stdout, stderr: $(cat "$tmp/err")"; return 1; }
}
check "T = d = 2048 under ulimit -v 300000: out of memory naming the configuration, exit 1, stdout empty" \
    out_of_memory -T 2048 -d 2048 -L 2
no_export() {
    out_of_memory -T 2048 -d 2048 -L 2 --export "$tmp/export" && [ ! -e "$tmp/export" ]
}
check "and with --export: no directory, no partial file" no_export
fits() {
    limited 300000 -T 64 -d 64 -L 2 && "$PY" tests/cli/contract.py 64 2 <"$tmp/out" ||
        { echo "  stderr: $(cat "$tmp/err")"; return 1; }
}
check "the same limit leaves a small configuration its whole document" fits
finish
