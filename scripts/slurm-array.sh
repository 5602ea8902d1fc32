#!/bin/bash
# A Slurm job array over a grid's configurations: each task runs a contiguous chunk of the
# lines of CONFIGS (JSON Lines from `attnscope grid`) in one --batch --jsonl process and
# writes OUTDIR/task-ID.jsonl (under a temporary name until it is complete); then
# `attnscope merge OUTDIR/task-*.jsonl` combines them.
#
#   sbatch --array=0-15 [sbatch options] scripts/slurm-array.sh [--bin PATH] CONFIGS.jsonl OUTDIR
#   attnscope merge --csv --grid CONFIGS.jsonl OUTDIR/task-*.jsonl >table.csv
#
# The tasks split the lines evenly whatever the array's size (task k of K gets lines
# k·n/K+1 .. (k+1)·n/K); a task that failed can be run again alone (sbatch --array=K ...),
# since each task's file is its own.  --bin: the attnscope binary (default: build/attnscope
# of the directory sbatch was run in when it exists, else attnscope on PATH).
#SBATCH --job-name=attnscope-sweep
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=2
set -u
bin=attnscope
[ -x "${SLURM_SUBMIT_DIR:-.}/build/attnscope" ] && bin=${SLURM_SUBMIT_DIR:-.}/build/attnscope
if [ "${1:-}" = --bin ]; then
    bin=${2:?--bin needs a value}
    shift 2
fi
fail() {
    echo "slurm-array.sh: $1" >&2
    exit 2
}
[ $# -eq 2 ] || fail "usage: sbatch --array=0-N scripts/slurm-array.sh [--bin PATH] CONFIGS.jsonl OUTDIR"
configs=$1 outdir=$2
[ -n "${SLURM_ARRAY_TASK_ID:-}" ] || fail "not a task of a job array: submit with sbatch --array=0-N"
[ -r "$configs" ] || fail "CONFIGS '$configs': not a readable file"
mkdir -p "$outdir" || fail "OUTDIR '$outdir': cannot be created"

first=${SLURM_ARRAY_TASK_MIN:-0}
count=${SLURM_ARRAY_TASK_COUNT:-$((${SLURM_ARRAY_TASK_MAX:-0} - first + 1))}
task=$((SLURM_ARRAY_TASK_ID - first))
lines=$(grep -c . "$configs")
from=$((task * lines / count + 1))
to=$(((task + 1) * lines / count))
out=$outdir/task-$SLURM_ARRAY_TASK_ID.jsonl
tmp=$outdir/.task-$SLURM_ARRAY_TASK_ID.jsonl.partial
# The task's cores run the network and its counterpart side by side (two lanes) unless the
# cluster sets OPENBLAS_NUM_THREADS.
grep . "$configs" | sed -n "${from},${to}p" | "$bin" --batch --jsonl >"$tmp"
status=$?
if [ $status -eq 0 ]; then
    mv "$tmp" "$out"
else
    echo "slurm-array.sh: task $SLURM_ARRAY_TASK_ID (lines $from..$to): attnscope exit $status; records in $tmp" >&2
fi
exit $status
