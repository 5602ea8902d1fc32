#!/bin/bash
# The default memory budget follows the process's real limits: ulimit -v (less what is mapped
# and OpenBLAS's buffers) and the cgroup's memory limit less its use (a fake cgroup directory
# through ATTNSCOPE_TEST_CGROUP_DIR, for tests only).  A configuration above it is refused
# before computing (exit 2, nothing on stdout) naming the limit; --verbose names it too.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

skip_script_under_asan "attnscope under ulimit -v"

under_ulimit() { # kbytes args...
    local limit=$1
    shift
    timeout 120 bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$limit" "$BIN" --batch "$@"
}
# T = d = 512, depth 8 needs about 76 MiB: above what 244 MiB of address space leaves once the
# binary, its libraries and OpenBLAS's 129 MiB buffer are mapped (it ran out of memory, exit 1).
check "ulimit -v 250000, T = d = 512, depth 8: refused before computing, naming the limit" \
    refused "T = 512, d = 512, depth 8 needs about 76 MiB, above the memory budget of" \
    "(set by ulimit -v of 244 MiB, less " "129 MiB for OpenBLAS's buffers" -- \
    under_ulimit 250000 -T 512 -d 512 -L 8
# What the budget accepts under the limit runs to its end: the largest of these sizes within it.
budget_accepts_runs() {
    local t need budget
    budget=$(under_ulimit 250000 --verbose -T 8 -d 8 -L 1 2>&1 >/dev/null |
        sed -n 's/^attnscope: memory budget \([0-9]*\) MiB (set by ulimit -v.*/\1/p')
    [ -n "$budget" ] || { echo "  --verbose names no ulimit -v budget"; return 1; }
    for t in 480 448 440 432 416 384 256; do
        need=$("$BIN" --batch -T $t -d $t -L 8 --max-memory 1M 2>&1 | sed -n 's/.*needs about \([0-9]*\) MiB.*/\1/p')
        [ "$need" -le "$budget" ] && break
    done
    under_ulimit 250000 -T $t -d $t -L 8 >"$tmp/fits.json" 2>"$tmp/fits.err" &&
        "$PY" tests/cli/contract.py $t 8 <"$tmp/fits.json" ||
        { echo "  T = d = $t ($need MiB, budget $budget MiB): $(head -c 300 "$tmp/fits.err")"; return 1; }
}
check "ulimit -v 250000: the largest size the budget accepts runs to its whole document" budget_accepts_runs
# Under ulimit -v 100000 nothing fits beside OpenBLAS's buffer: the refusal names the limit
# that would hold the run, and that limit does.
suggested_limit_holds() {
    under_ulimit 100000 -T 8 -d 8 -L 2 >/dev/null 2>"$tmp/small.err"
    local status=$? limit
    limit=$(sed -n 's/.*; ulimit -v \([0-9]*\) would hold it)$/\1/p' "$tmp/small.err")
    [ $status -eq 2 ] && [ -n "$limit" ] || { echo "  exit $status: $(cat "$tmp/small.err")"; return 1; }
    under_ulimit "$limit" -T 8 -d 8 -L 2 >"$tmp/small.json" 2>"$tmp/small.err" &&
        "$PY" tests/cli/contract.py 8 2 <"$tmp/small.json" ||
        { echo "  under ulimit -v $limit: $(head -c 300 "$tmp/small.err")"; return 1; }
}
check "ulimit -v 100000: refused naming a ulimit -v that holds the run, and it does" suggested_limit_holds
# --max-memory past the limit reaches OpenBLAS's buffers: out of memory (exit 1), saying for
# how many threads and which limit would hold them.
check "ulimit -v 100000 with --max-memory: OpenBLAS's buffers' message names the threads and a limit" \
    ends_saying 1 "129 MiB for each of 1 thread calling BLAS, beside the" "would hold it" -- \
    under_ulimit 100000 -T 8 -d 8 -L 2 --max-memory 1M
# --conditioning is held to the budget beside the network: the first refusal names the need
# of both, the larger first, so that a budget of that passes every memory check (the run is
# then refused by --max-time, checked after the memory, and nothing is computed).
conditioning_whole_need() {
    local args=(--batch --conditioning -T 128 -d 128 -L 2) need
    "$BIN" "${args[@]}" --max-memory 1M >/dev/null 2>"$tmp/cond.err"
    need=$(sed -n 's/.*depth 2 needs about \([0-9]*\) MiB (the network [0-9]* MiB; the Jacobian or the Lanczos basis [0-9]* MiB), above.*/\1/p' "$tmp/cond.err")
    [ -n "$need" ] || { echo "  $(cat "$tmp/cond.err")"; return 1; }
    refused "(--max-time)" -- "$BIN" "${args[@]}" --max-memory "${need}M" --max-time 0.0001 &&
        ! grep -qF "memory budget" "$tmp/err"
}
check "--conditioning above --max-memory: one refusal names the whole need, which then passes" \
    conditioning_whole_need

cgroup() { # dir max current [v1]: a fake cgroup directory
    mkdir -p "$1"
    if [ "${4:-}" = v1 ]; then
        echo "$2" >"$1/memory.limit_in_bytes" && echo "$3" >"$1/memory.usage_in_bytes"
    else
        echo "$2" >"$1/memory.max" && echo "$3" >"$1/memory.current"
    fi
}
# 2 GiB, 1984 MiB of it in use: 64 MiB left.
cgroup "$tmp/v2" 2147483648 2080374784
cgroup "$tmp/v1" 2147483648 2080374784 v1
cgroup "$tmp/none" max 2080374784
with_cgroup() { ATTNSCOPE_TEST_CGROUP_DIR=$1 "${@:2}"; }
# The same use, 1.5 GiB of it the inactive page cache the kernel drops before it fails an
# allocation: 1.56 GiB left, which holds T = d = 512 (v2's inactive_file, v1's
# total_inactive_file; a line that only starts with the key is another's).
cgroup "$tmp/v2cache" 2147483648 2080374784
printf 'active_file 1\ninactive_file_x 7\ninactive_file 1610612736\n' >"$tmp/v2cache/memory.stat"
cgroup "$tmp/v1cache" 2147483648 2080374784 v1
printf 'inactive_file 1\ntotal_inactive_file 1610612736\n' >"$tmp/v1cache/memory.stat"
cache_left_out() { # dir: --verbose's budget is memory.max less the use without the cache
    with_cgroup "$1" "$BIN" --batch --verbose -T 512 -d 512 -L 2 2>"$tmp/cache.err" >/dev/null &&
        grep -qE "attnscope: memory budget 1600 MiB \(set by the cgroup's memory\.(max|limit_in_bytes) of 2\.0 GiB, 448 MiB of it in use \(its inactive file cache left out\)" \
            "$tmp/cache.err" || { echo "  $(head -c 400 "$tmp/cache.err")"; return 1; }
}
check "cgroup v2: its inactive file cache is not counted as in use; the run goes on" \
    cache_left_out "$tmp/v2cache"
check "cgroup v1: its total_inactive_file is not counted as in use; the run goes on" \
    cache_left_out "$tmp/v1cache"
check "cgroup v2 memory.max 2 GiB, 1.9 GiB in use: T = d = 512 refused, naming memory.max" \
    refused "needs about 76 MiB, above the memory budget of 64 MiB (set by the cgroup's memory.max of 2.0 GiB, 1.9 GiB of it in use" \
    "a cgroup limit of at least 2060M would hold it)" -- \
    with_cgroup "$tmp/v2" "$BIN" --batch -T 512 -d 512 -L 8
check "cgroup v1 memory.limit_in_bytes: the same, naming it" \
    refused "above the memory budget of 64 MiB (set by the cgroup's memory.limit_in_bytes of 2.0 GiB" -- \
    with_cgroup "$tmp/v1" "$BIN" --batch -T 512 -d 512 -L 8
verbose_names() { # dir expected-fragment
    with_cgroup "$1" "$BIN" --batch --verbose -T 8 -d 8 -L 1 2>"$tmp/verbose.err" >/dev/null &&
        grep -qF -- "$2" "$tmp/verbose.err" || { echo "  $(head -c 300 "$tmp/verbose.err")"; return 1; }
}
check "--verbose names the budget and the cgroup limit that set it" verbose_names "$tmp/v2" \
    "attnscope: memory budget 64 MiB (set by the cgroup's memory.max of 2.0 GiB, 1.9 GiB of it in use"
check "memory.max 'max' is no limit: half of the physical memory sets the budget" verbose_names \
    "$tmp/none" "(set by half of the physical memory"
# Refused by --max-time instead, which is checked after the memory: nothing is computed.
check "--max-memory above the cgroup's limit is the user's word: not refused for memory" \
    refused "(--max-time)" -- with_cgroup "$tmp/v2" "$BIN" --batch -T 512 -d 512 -L 8 \
    --max-memory 1G --max-time 0.0001
finish
