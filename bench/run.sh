#!/usr/bin/env bash
# attnscope benchmark (issue 4).  `make bench` runs `bench/run.sh build/attnscope`.
#
#   bench/run.sh [--table] [--threads] [--check] [--latency] [--estimate] BIN
#
# No mode flag: all five.  --table: end-to-end medians and peak RSS of `BIN --batch` and of
# the numpy reference (bench/numpy_ref.py, Debian's /usr/bin/python3), interleaved in the same
# run, and attnscope's per-stage times (bench/bench_stages.c, built here against the core
# library next to BIN).  --threads: OPENBLAS_NUM_THREADS unset (attnscope's default), 1 and 2.
# --check: attnscope and numpy_ref compared statistically at T = d = 256, 3 seeds.
# --latency: keystroke -> status and -> plot of the screen in tmux, from --trace
# (bench/latency.py).  --estimate: the cost model's estimate (--batch --verbose) against the
# time taken, for the configurations above and a few more shapes (bench/estimate.py).
#
# Environment: BENCH_SIZES="128 256 512 1024 2048", BENCH_RUNS=5, BENCH_BUDGET=45 (seconds per
# program and configuration; 0 = no cap), BENCH_DEPTH=8.  See bench/README.md.
#
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed for both programs, so that each runs the
# kernel OpenBLAS picks for this CPU.  Benchmarks report: this script exits 0 whatever the
# numbers are, and also when a part of it cannot run (it says so).
set -u

modes=()
bin=""
for arg in "$@"; do
    case "$arg" in
    --table | --threads | --check | --latency | --estimate) modes+=("$arg") ;;
    -h | --help)
        sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "bench/run.sh: unknown option $arg (accepted: --table --threads --check --latency --estimate)" >&2
        exit 2
        ;;
    *) bin="$arg" ;;
    esac
done
if [ -z "$bin" ]; then
    echo "usage: bench/run.sh [--table] [--threads] [--check] [--latency] [--estimate] BIN" >&2
    exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
case "$bin" in
/*) ;;
*) bin="$PWD/$bin" ;;
esac
if [ ! -x "$bin" ]; then
    echo "bench: $bin is not built (make all); nothing measured" >&2
    exit 0
fi
if [ ! -x /usr/bin/python3 ]; then
    echo "bench: /usr/bin/python3 is missing (apt-get install python3 python3-numpy); nothing measured" >&2
    exit 0
fi

# The stage harness, with the Makefile's flags, against the core library next to BIN.
build_dir="$(dirname "$bin")"
core_lib="$build_dir/libattnscope_core.a"
stages="$build_dir/bench/bench_stages"
if [ -f "$core_lib" ]; then
    mkdir -p "$build_dir/bench"
    # shellcheck disable=SC2046 # pkg-config prints several words on purpose
    if ! (cd "$root" && ${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -Wshadow \
        -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -Iinclude \
        $(pkg-config --cflags openblas lapacke 2>/dev/null) \
        bench/bench_stages.c -o "$stages" "$core_lib" -lgsl \
        $(pkg-config --libs openblas lapacke 2>/dev/null || echo -lopenblas -llapacke) -lm); then
        echo "bench: bench/bench_stages.c does not build against this core; no per-stage times" >&2
        stages=""
    fi
else
    echo "bench: $core_lib not found; no per-stage times" >&2
    stages=""
fi

# Measure a copy, so that a rebuild during the run (make in another shell) changes nothing.
snapshot="$(mktemp -d "${TMPDIR:-/tmp}/attnscope-bench.XXXXXX")" || exit 0
trap 'rm -rf "$snapshot"' EXIT
cp "$bin" "$snapshot/attnscope" || exit 0

cd "$root" || exit 0
echo "bench: measuring a copy of $bin (taken $(date '+%H:%M:%S'))" >&2
# bench.py takes the batch modes; the latency of the screen is latency.py's, the estimates
# estimate.py's.
batch_modes=()
latency=${#modes[@]}
latency=$((latency == 0))
estimate=$latency
for m in "${modes[@]}"; do
    case "$m" in
    --latency) latency=1 ;;
    --estimate) estimate=1 ;;
    *) batch_modes+=("$m") ;;
    esac
done
if [ ${#modes[@]} -eq 0 ] || [ ${#batch_modes[@]} -gt 0 ]; then
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        /usr/bin/python3 bench/bench.py --bin "$snapshot/attnscope" --stages "$stages" \
        --source "$bin" "${batch_modes[@]}"
    status=$?
    if [ "$status" -ne 0 ]; then
        echo "bench: the driver stopped with status $status (benchmarks do not fail the build)" >&2
    fi
fi
if [ "$latency" -eq 1 ]; then
    echo "bench: screen latency (tmux, --trace)" >&2
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        /usr/bin/python3 bench/latency.py --bin "$snapshot/attnscope" ||
        echo "bench: latency.py stopped (benchmarks do not fail the build)" >&2
fi
if [ "$estimate" -eq 1 ]; then
    echo "bench: the cost model's estimates against the clock" >&2
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        /usr/bin/python3 bench/estimate.py --bin "$snapshot/attnscope" ||
        echo "bench: estimate.py stopped (benchmarks do not fail the build)" >&2
fi
exit 0
