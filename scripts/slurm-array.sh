#!/bin/bash
# A Slurm job array over a grid's configurations: each task runs a contiguous chunk of the
# lines of CONFIGS (JSON Lines from `attnscope grid`) in one --batch --jsonl process and
# writes OUTDIR/task-ID.jsonl (under a temporary name until it is complete); then
# `attnscope merge OUTDIR/task-*.jsonl` combines them.
#
#   sbatch --array=0-15 [sbatch options] scripts/slurm-array.sh --tasks 16 [--bin PATH] CONFIGS.jsonl OUTDIR
#   attnscope merge --csv --grid CONFIGS.jsonl OUTDIR/task-*.jsonl >table.csv
#
# --tasks K splits the lines into K even chunks (task k gets lines k·n/K+1 .. (k+1)·n/K, at
# least one each, so K <= n) and names task k by its SLURM_ARRAY_TASK_ID alone, never by the
# array's size: a task that failed is run again alone with the same --tasks K (sbatch
# --array=k ...) and writes exactly its own lines, and any set of IDs in 0..K-1 (a step
# array 0-15:2, then 1-15:2) runs those tasks' lines.  An ID outside 0..K-1 is refused.
# --bin: the attnscope binary (default: build/attnscope of the directory sbatch was run in
# when it exists, else attnscope on PATH).
#SBATCH --job-name=attnscope-sweep
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=2
set -u
bin=attnscope
[ -x "${SLURM_SUBMIT_DIR:-.}/build/attnscope" ] && bin=${SLURM_SUBMIT_DIR:-.}/build/attnscope
usage="usage: sbatch --array=0-N scripts/slurm-array.sh --tasks N+1 [--bin PATH] CONFIGS.jsonl OUTDIR"
fail() {
    echo "slurm-array.sh: $1" >&2
    exit 2
}
tasks=
while [ $# -gt 0 ]; do
    case "$1" in
    --tasks | --bin)
        [ $# -ge 2 ] || fail "$1: needs a value ($usage)"
        case "$1" in
        --tasks) tasks=$2 ;;
        --bin) bin=$2 ;;
        esac
        shift 2
        ;;
    -*) fail "unknown option '$1' ($usage)" ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || fail "$usage"
configs=$1 outdir=$2
case "$tasks" in
'') fail "--tasks K is needed: the number of tasks the grid's lines are split into, the same for every submission of the array (its first 0-(K-1), and a rerun of task k as --array=k)" ;;
*[!0-9]* | 0*) fail "--tasks '$tasks': accepted a whole number from 1" ;;
esac
id=${SLURM_ARRAY_TASK_ID:-}
[ -n "$id" ] || fail "not a task of a job array: submit with sbatch --array=0-$((tasks - 1))"
case "$id" in
*[!0-9]* | 0?*) fail "SLURM_ARRAY_TASK_ID '$id': accepted a task 0..$((tasks - 1)) of --tasks $tasks" ;;
esac
[ "$id" -lt "$tasks" ] || fail "SLURM_ARRAY_TASK_ID $id: accepted a task 0..$((tasks - 1)) of --tasks $tasks (the array's IDs must be within the grid's tasks)"
[ -r "$configs" ] && [ -f "$configs" ] || fail "CONFIGS '$configs': not a readable file"
# Checked before anything is made: a missing binary would exit 127 leaving an empty .partial.
command -v "$bin" >/dev/null 2>&1 ||
    fail "--bin '$bin': not an executable on this node (accepted the attnscope binary's path; default build/attnscope of the submit directory, else attnscope on PATH)"
lines=$(grep -c . "$configs")
[ "$tasks" -le "$lines" ] || fail "--tasks $tasks: accepted 1..$lines, the lines of CONFIGS '$configs' (each task runs at least one)"
mkdir -p "$outdir" || fail "OUTDIR '$outdir': cannot be created"

from=$((id * lines / tasks + 1))
to=$(((id + 1) * lines / tasks))
out=$outdir/task-$id.jsonl
tmp=$outdir/.task-$id.jsonl.partial
# The task's cores run the network and its counterpart side by side (two lanes) unless the
# cluster sets OPENBLAS_NUM_THREADS.
grep . "$configs" | sed -n "${from},${to}p" | ATTNSCOPE_FIRST_LINE=$from "$bin" --batch --jsonl >"$tmp"
status=$?
if [ $status -eq 0 ]; then
    mv "$tmp" "$out"
else
    echo "slurm-array.sh: task $id of $tasks (lines $from..$to): attnscope exit $status; records in $tmp" >&2
fi
exit $status
