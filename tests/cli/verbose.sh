#!/bin/bash
# --verbose: batch prints the cost model's estimate on stderr before computing and the time
# taken after; stdout stays the same document.  The numbers are not compared with the clock
# (timing): bench/estimate.py measures that.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

run_args=(--batch -T 32 -d 48 -L 3 --seeds 2)
"$BIN" "${run_args[@]}" >"$tmp/plain.json" 2>"$tmp/plain.err"
plain=$?
"$BIN" "${run_args[@]}" --verbose >"$tmp/verbose.json" 2>"$tmp/verbose.err"
verbose=$?
check "--batch with and without --verbose exit 0" test "$plain" -eq 0 -a "$verbose" -eq 0
check "--verbose leaves stdout as it was" cmp -s "$tmp/plain.json" "$tmp/verbose.json"
check "without --verbose stderr is empty" test ! -s "$tmp/plain.err"

# Three lines, in order: the memory budget and the limit that set it (memory-limits.sh checks
# which), the estimate (with what it is for), then the time taken quoting it.
estimate_then_actual() {
    "$PY" - "$tmp/verbose.err" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, lines
assert re.fullmatch(r"attnscope: memory budget [0-9]+ MiB \(set by .*; --max-memory sets one\)",
                    lines[0]), lines
lines = lines[1:]
first = re.fullmatch(r"attnscope: estimate ([0-9.e+-]+) s for T = 32, d = 48, depth 3, 2 seeds "
                     r"\(dgemm at ([0-9.]+) GFLOP/s per core, (two lanes|one lane)\)", lines[0])
second = re.fullmatch(r"attnscope: computed in ([0-9.e+-]+) s \(estimate ([0-9.e+-]+) s\)", lines[1])
assert first and second, lines
assert float(first.group(1)) > 0 and float(first.group(2)) > 0, lines
assert first.group(1) == second.group(2), lines
assert float(second.group(1)) > 0, lines
PY
}
check "stderr: the memory budget, the estimate, then the time taken with the same estimate" estimate_then_actual

"$BIN" --batch -T 32 -d 32 -L 2 --sweep-T --verbose >/dev/null 2>"$tmp/sweep.err"
check "--sweep-T: exit 0, the estimate includes the width sweep" \
    grep -q "^attnscope: estimate .* 1 seed, width sweep (" "$tmp/sweep.err"

OPENBLAS_NUM_THREADS=1 "$BIN" --batch -T 32 -d 32 -L 2 --verbose >/dev/null 2>"$tmp/one.err"
check "OPENBLAS_NUM_THREADS set: the estimate is for one lane" grep -q "one lane)$" "$tmp/one.err"

# With --weights: each layer the checkpoint is read for, once per seed, between the two.
"$BIN" -T 16 -d 16 -L 3 --export-weights "$tmp/w" 2>/dev/null
"$BIN" --batch -T 16 -d 16 -L 3 --seeds 2 --weights "$tmp/w" --verbose >/dev/null 2>"$tmp/read.err"
reading=$(grep -v "^attnscope: warning" "$tmp/read.err" | sed -E 's/^attnscope: (memory budget|estimate|computed).*/\1/; s/^attnscope: reading layer //' | tr '\n' ,)
check "--weights: every layer read once per seed, after the estimate ($reading)" \
    test "$reading" = "memory budget,estimate,1/3,2/3,3/3,1/3,2/3,3/3,computed,"

# --jsonl: the memory budget once, then each line's estimate before it computes and its time
# after, named by its line; stdout the same records but each record's "elapsed_seconds".
printf '{"T": 16, "d": 16, "depth": 1}\n{"T": 24, "d": 32, "depth": 2, "seeds": 2}\n' >"$tmp/lines.jsonl"
"$BIN" --batch --jsonl <"$tmp/lines.jsonl" >"$tmp/lines-plain.out" 2>"$tmp/lines-plain.err"
plain=$?
"$BIN" --batch --jsonl --verbose <"$tmp/lines.jsonl" >"$tmp/lines.out" 2>"$tmp/lines.err"
verbose=$?
jsonl_lines_said() {
    "$PY" - "$tmp/lines.err" "$tmp/lines.out" "$tmp/lines-plain.out" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 5, lines
assert re.fullmatch(r"attnscope: memory budget [0-9]+ MiB \(.*\)", lines[0]), lines
for n, (t, d, depth, seeds) in enumerate([(16, 16, 1, "1 seed"), (24, 32, 2, "2 seeds")], 1):
    first = re.fullmatch(r"attnscope: line %d: estimate ([0-9.e+-]+) s for T = %d, d = %d, depth %d, "
                         r"%s \(dgemm at [0-9.]+ GFLOP/s per core, (two lanes|one lane)\)"
                         % (n, t, d, depth, seeds), lines[2 * n - 1])
    second = re.fullmatch(r"attnscope: line %d: computed in ([0-9.e+-]+) s \(estimate ([0-9.e+-]+) s\)"
                          % n, lines[2 * n])
    assert first and second and first.group(1) == second.group(2), lines
drop = lambda path: [{k: v for k, v in json.loads(l).items() if k != "elapsed_seconds"} for l in open(path)]
assert drop(sys.argv[2]) == drop(sys.argv[3])
PY
}
check "--jsonl --verbose: exit 0, the budget, each line's estimate and time, the same records" \
    eval 'test $plain -eq 0 -a $verbose -eq 0 && jsonl_lines_said'
check "--jsonl without --verbose: stderr empty" test ! -s "$tmp/lines-plain.err"

"$BIN" -T 32 -d 32 --verbose >"$tmp/screen.out" 2>"$tmp/screen.err"
status=$?
check "--verbose without --batch: exit 2, the message names --verbose and --batch" \
    eval 'test $status -eq 2 && grep -q "^attnscope: --verbose: accepted only with --batch" "$tmp/screen.err"'
finish
