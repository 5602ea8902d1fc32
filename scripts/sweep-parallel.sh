#!/bin/bash
# Runs a grid's configurations (JSON Lines, from `attnscope grid`) with GNU parallel, here or
# on other machines, appending the result records to RESULTS; `attnscope merge RESULTS`
# then combines them in the order of their settings, so the order jobs finish in is of no
# consequence.
#
#   scripts/sweep-parallel.sh [options] CONFIGS.jsonl RESULTS.jsonl
#     --jobs N             jobs at a time on each machine (default: one per core)
#     --lines N            configurations per job, one process each (default 1; more amortise
#                          the start of a process over small configurations)
#     --sshloginfile FILE  run the jobs on these machines (GNU parallel's format: one
#                          [ncores/]host per line, ':' is this machine); attnscope must be
#                          installed at the same path on each (--bin)
#     --joblog FILE        GNU parallel's job log (default: RESULTS.joblog)
#     --resume             skip the jobs the job log says succeeded, and run again those it says
#                          failed (an interrupted sweep goes on where it stopped; a failed
#                          job's lines are appended again: merge leaves out a failed line's
#                          record once its configuration's record is there, and a record
#                          that is there twice with the same numbers bit for bit; with
#                          --lines above 1 the chunk's lines that had succeeded run again,
#                          and on another CPU's BLAS kernels their last bits may differ,
#                          which merge refuses naming both: README, "Many cores")
#     --max-time SECONDS   passed to each job's attnscope: the longest estimate a line starts,
#                          over the lines' own "max_time" (grid --max-time), so that lines
#                          refused as too long run with --resume --max-time LONGER
#     --bin PATH           the attnscope binary (default: build/attnscope of this tree when
#                          it exists, else attnscope on PATH)
#
# Each job runs with one BLAS thread and one lane (OPENBLAS_NUM_THREADS=1): parallel fills
# the cores with jobs instead.  Exit status: 0 when every job succeeded; 2 on bad usage; else
# GNU parallel's (the number of failed jobs, which the job log names).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=attnscope
[ -x "$here/build/attnscope" ] && bin=$here/build/attnscope
jobs= lines=1 sshloginfile= joblog= resume= max_time=()

usage() {
    echo "sweep-parallel.sh: $1" >&2
    echo "usage: scripts/sweep-parallel.sh [--jobs N] [--lines N] [--sshloginfile FILE] [--joblog FILE] [--resume] [--max-time SECONDS] [--bin PATH] CONFIGS.jsonl RESULTS.jsonl" >&2
    exit 2
}
positive() { # option value
    case "$2" in
    '' | *[!0-9]* | 0*) usage "$1 '$2': accepted a whole number from 1" ;;
    esac
}

while [ $# -gt 0 ]; do
    case "$1" in
    --jobs | --lines | --sshloginfile | --joblog | --bin | --max-time)
        [ $# -ge 2 ] || usage "$1: needs a value"
        case "$1" in
        --jobs) positive "$1" "$2"; jobs=$2 ;;
        --lines) positive "$1" "$2"; lines=$2 ;;
        --sshloginfile) [ -r "$2" ] || usage "--sshloginfile '$2': not a readable file"; sshloginfile=$2 ;;
        --joblog) joblog=$2 ;;
        --bin) bin=$2 ;;
        --max-time) max_time=(--max-time "$2") ;; # attnscope checks it, naming the option
        esac
        shift 2
        ;;
    --resume) resume=1; shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) usage "unknown option '$1'" ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || usage "expected CONFIGS.jsonl and RESULTS.jsonl, found $# arguments"
configs=$1 results=$2
[ -r "$configs" ] && [ -f "$configs" ] || usage "CONFIGS '$configs': not a readable file"
# moreutils ships another program named parallel, with other options.
parallel --version 2>/dev/null | grep -q '^GNU parallel' ||
    usage "GNU parallel is not installed (Debian: apt-get install parallel; scripts/install-deps.sh check)"
[ -n "$sshloginfile" ] || command -v "$bin" >/dev/null 2>&1 || usage "--bin '$bin': not an executable"
joblog=${joblog:-$results.joblog}

args=(--pipe -N "$lines" --joblog "$joblog")
[ -n "$resume" ] && args+=(--resume-failed)
[ -n "$jobs" ] && args+=(--jobs "$jobs")
[ -n "$sshloginfile" ] && args+=(--sshloginfile "$sshloginfile")
# --pipe numbers the blocks of N lines in order, so a job's number names the same lines in a
# resumed run.  Each job's output reaches RESULTS whole, once the job has ended.
# ATTNSCOPE_FIRST_LINE: the chunk's first line in CONFIGS, so that stderr names the grid's line.
parallel "${args[@]}" env OPENBLAS_NUM_THREADS=1 ATTNSCOPE_FIRST_LINE="{= \$_ = (seq() - 1) * $lines + 1 =}" \
    "$bin" --batch --jsonl "${max_time[@]}" <"$configs" >>"$results"
