#!/bin/bash
# scripts/slurm-array.sh run as Slurm runs a task, with the variables a job array's task
# sees (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _COUNT), no Slurm needed: a whole array, a task run
# again alone (sbatch --array=2: MIN = MAX = 2, COUNT = 1), a step array's two halves
# (--array=0-3:2 then 1-3:2) each write exactly their tasks' lines, which merge --grid
# accepts; an ID outside the tasks, a missing or bad --tasks and a --bin that is not an
# executable are refused (exit 2), nothing made.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

"$BIN" grid 'T=8,16 gap=off,center seeds=4' -d 16 -L 2 --shards 2 >"$tmp/grid.jsonl"
check "the grid has 8 lines" test "$(wc -l <"$tmp/grid.jsonl")" -eq 8

# task ID MIN MAX COUNT OUTDIR [--tasks K]: the script as the array's task ID runs it.
task() {
    local id=$1 min=$2 max=$3 count=$4 outdir=$5
    shift 5
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max \
        SLURM_ARRAY_TASK_COUNT=$count scripts/slurm-array.sh "$@" --bin "$BIN" \
        "$tmp/grid.jsonl" "$outdir"
}
# The grid's line numbers of the records of a task's file, in the file's order: each
# record's configuration (its seed range included) found among the grid's lines.
grid_lines_of() {
    "$PY" -c 'import json, sys
grid = [json.loads(line) for line in open(sys.argv[1])]
numbers = []
for line in open(sys.argv[2]):
    config = json.loads(line)["config"]
    config.pop("d_qk")
    numbers.append(str(grid.index(config) + 1) if config in grid else "?")
print(" ".join(numbers))' "$tmp/grid.jsonl" "$1"
}
# Whether task k's file holds exactly lines 2k+1 and 2k+2 of the grid (4 tasks of 8 lines).
holds_its_lines() { # outdir k
    [ "$(grid_lines_of "$1/task-$2.jsonl")" = "$((2 * $2 + 1)) $((2 * $2 + 2))" ]
}

for k in 0 1 2 3; do task $k 0 3 4 "$tmp/all" --tasks 4 2>"$tmp/err.$k" || echo "  task $k: $(cat "$tmp/err.$k")"; done
for k in 0 1 2 3; do
    check "array 0-3, task $k: its 2 lines (lines $((2 * k + 1))..$((2 * k + 2)))" holds_its_lines "$tmp/all" $k
done
check "array 0-3: merge --grid accepts the 4 files" \
    bash -c "'$BIN' merge --grid '$tmp/grid.jsonl' '$tmp/all'/task-*.jsonl >/dev/null"

# Task 2 failed: run again alone, as sbatch --array=2 runs it.
mkdir -p "$tmp/rerun"
cp "$tmp/all/task-0.jsonl" "$tmp/all/task-1.jsonl" "$tmp/all/task-3.jsonl" "$tmp/rerun/"
task 2 2 2 1 "$tmp/rerun" --tasks 4 2>"$tmp/err.rerun"
check "rerun of task 2 alone (MIN = MAX = 2, COUNT = 1): exit 0" test $? -eq 0
check "rerun of task 2 alone: task 2's lines (5 and 6), no other" holds_its_lines "$tmp/rerun" 2
check "rerun of task 2: merge --grid accepts it with the other three" \
    bash -c "'$BIN' merge --grid '$tmp/grid.jsonl' '$tmp/rerun'/task-*.jsonl >/dev/null"

# A step array's halves: --array=0-3:2 (IDs 0 and 2) and --array=1-3:2 (IDs 1 and 3).
task 0 0 2 2 "$tmp/step" --tasks 4 && task 2 0 2 2 "$tmp/step" --tasks 4 &&
    task 1 1 3 2 "$tmp/step" --tasks 4 && task 3 1 3 2 "$tmp/step" --tasks 4
check "step arrays 0-3:2 and 1-3:2: every task exit 0" test $? -eq 0
for k in 0 1 2 3; do
    check "step arrays, task $k: its 2 lines" holds_its_lines "$tmp/step" $k
done
check "step arrays: merge --grid accepts the 4 files" \
    bash -c "'$BIN' merge --grid '$tmp/grid.jsonl' '$tmp/step'/task-*.jsonl >/dev/null"

# refused DESCRIPTION MESSAGE ID MIN MAX COUNT [ARGS...]: exit 2, MESSAGE on stderr, no file
# written.
refused() {
    local what=$1 message=$2
    shift 2
    rm -rf "$tmp/bad"
    task "$1" "$2" "$3" "$4" "$tmp/bad" "${@:5}" >/dev/null 2>"$tmp/err"
    local status=$?
    if [ $status -eq 2 ] && grep -qF -- "$message" "$tmp/err" && [ -z "$(ls -A "$tmp/bad" 2>/dev/null)" ]; then
        ok "$what"
    else
        not_ok "$what (exit $status: $(head -c 300 "$tmp/err"))"
    fi
}
refused "an ID outside the tasks (4 of --tasks 4) is named" \
    "SLURM_ARRAY_TASK_ID 4: accepted a task 0..3 of --tasks 4" 4 0 4 5 --tasks 4
refused "without --tasks: refused, saying what it is" "--tasks K is needed" 0 0 3 4
refused "--tasks 0: refused" "--tasks '0': accepted a whole number from 1" 0 0 3 4 --tasks 0
refused "--tasks 9 over 8 lines: refused, naming the lines" \
    "--tasks 9: accepted 1..8, the lines of CONFIGS" 0 0 8 9 --tasks 9
# The binary missing on the node: refused before anything is made (it once exited 127 and left
# an empty .partial file).
BIN=$tmp/no-such-attnscope refused "a missing --bin: refused, naming it, nothing made" \
    "--bin '$tmp/no-such-attnscope': not an executable" 0 0 3 4 --tasks 4

finish
