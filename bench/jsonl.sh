#!/usr/bin/env bash
# Per-configuration overhead of --batch --jsonl against one --batch process per
# configuration (issue 15): 100 small configurations (T = d = 64; 5 attention kinds (softmax, markov, relu,
# sigmoid, uniform: linear with the outliers gap mode at depth 8 fails in LAPACK, a model bug
# outside this benchmark) x 2 masks
# x 5 gap modes x depth 4 and 8), run as one JSON Lines stream and as 100 processes, each way
# BENCH_RUNS times (default 3), interleaved; prints the medians and their ratio.
#
#   bench/jsonl.sh BIN
#
# A benchmark reports: it exits 0 whatever the numbers are.  Both ways are checked to give the
# same numbers first (a faster wrong answer is no answer).
set -u
bin=${1:?usage: bench/jsonl.sh BIN}
runs=${BENCH_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" grid 'attention=softmax,markov,relu,sigmoid,uniform mask=full,causal gap=off,center,uniform,deflate,outliers depth=4,8' \
    -T 64 -d 64 >"$tmp/grid.jsonl"
# The same configurations as command lines, from the grid's own lines.
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    print(" ".join(f"--{k} {c[j]}" for k, j in (("tokens", "T"), ("width", "d"), ("depth", "depth"),
          ("attention", "attention"), ("mask", "mask"), ("gap", "gap"))))' "$tmp/grid.jsonl" >"$tmp/args"
echo "configurations: $(wc -l <"$tmp/grid.jsonl")"

one_stream() { "$bin" --batch --jsonl <"$tmp/grid.jsonl" >"$tmp/stream.jsonl"; }
processes() {
    : >"$tmp/processes.jsonl"
    while read -r -a args; do
        "$bin" --batch "${args[@]}" | tr -d '\n' >>"$tmp/processes.jsonl"
        echo >>"$tmp/processes.jsonl"
    done <"$tmp/args"
}
seconds() { # command: wall seconds
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

one_stream
processes
same=$(python3 -c 'import json, sys
keys = {"line", "blas_threads", "elapsed_seconds", "provenance"}
a = [{k: v for k, v in json.loads(l).items() if k not in keys} for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
print("same numbers" if a == b else "DIFFERENT numbers")' "$tmp/stream.jsonl" "$tmp/processes.jsonl")
echo "check: --jsonl and one process per configuration give the $same"

stream_times=() process_times=()
for _ in $(seq "$runs"); do
    stream_times+=("$(seconds one_stream)")
    process_times+=("$(seconds processes)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
s=$(median "${stream_times[@]}")
p=$(median "${process_times[@]}")
printf 'one --jsonl stream:          %.3f s  (%.1f ms per configuration)  runs: %s\n' "$s" "$(echo "$s * 10" | bc -l)" "${stream_times[*]}"
printf '100 --batch processes:       %.3f s  (%.1f ms per configuration)  runs: %s\n' "$p" "$(echo "$p * 10" | bc -l)" "${process_times[*]}"
printf 'speed-up: %.1fx; overhead of a process: %.1f ms per configuration\n' "$(echo "$p / $s" | bc -l)" "$(echo "($p - $s) * 10" | bc -l)"
