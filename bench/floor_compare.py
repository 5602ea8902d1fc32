#!/usr/bin/python3
"""Two attnscope binaries and the numpy references against issue 25's floor, interleaved.

    /usr/bin/python3 bench/floor_compare.py --base /work/main/build/attnscope \\
        --bin build/attnscope --stages build/bench/bench_stages -T 1024 --runs 5

Per size: one warm-up round, then --runs rounds, each of `BASE --batch`, `BIN --batch`,
bench/numpy_ref.py (the stable ranks and the shown layer's spectra: "numpy", comparable with
the numbers recorded before), bench/numpy_ref.py --same-as-batch (every per-layer number
--batch prints: "numpy_full", the fair reference; which of its numbers tests/cli/numpy-ref.sh
proves equal to attnscope's, and where, bench/README.md says) with the same flags (-T T -d T -L 8
-a softmax -g off --seed 1), and the floor (`STAGES ... --floor-only --reps 1`: bench_stages,
built by bench/run.sh, times the products' flops at its dgemm rate plus one dgeev), one after
the other, so that a change of load hits all of them.  Medians of the wall times and of the
floors over the rounds, the floor's range, and each round's BIN/floor (a program and the floor
timed seconds apart); the median CPU seconds (user + system of all threads, from
RUSAGE_CHILDREN) of each program beside its wall time, which a shared machine's load moves less;
and numpy_ref's own compute seconds (after the interpreter and its imports).  OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed, as bench/run.sh
does.  Prints one JSON object per size, with the 1-minute load average before and after each
round.  Benchmarks report: timings are never a test.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, env):
    """Wall seconds of one run, its CPU seconds (user + system, all its threads), its stdout."""
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, check=True)
    return time.perf_counter() - start, children_cpu() - cpu, done.stdout


def ratios(numerators, denominators):
    return [n / d for n, d in zip(numerators, denominators)]


def compare(args, T, env):
    flags = ["-T", str(T), "-d", str(T), "-L", str(args.depth), "-a", "softmax", "-g", "off",
             "--seed", "1"]
    reference = ["/usr/bin/python3", os.path.join(ROOT, "bench", "numpy_ref.py")]
    programs = {"base": [args.base, "--batch"] + flags, "bin": [args.bin, "--batch"] + flags,
                "numpy": reference + flags, "numpy_full": reference + ["--same-as-batch"] + flags}
    floor_argv = [args.stages] + flags + ["--floor-only", "--reps", "1"]
    walls = {name: [] for name in programs}
    cpus = {name: [] for name in programs}
    computes = {"numpy": [], "numpy_full": []}  # numpy_ref's own "elapsed": after the imports
    floors, rates = [], []
    loads = [load_average()]
    for round_ in range(args.runs + 1):  # round 0 warms up
        for name, argv in programs.items():
            wall, cpu, out = timed(argv, env)
            if round_:
                walls[name].append(wall)
                cpus[name].append(cpu)
                if name in computes:
                    computes[name].append(json.loads(out)["elapsed"])
        _, _, out = timed(floor_argv, env)
        if round_:
            floor = json.loads(out)
            floors.append(floor["floor_ms"] / 1e3)
            rates.append(floor["dgemm_gflops"])
        loads.append(load_average())
    median = {name: statistics.median(w) for name, w in walls.items()}
    floor_s = statistics.median(floors)
    per_round = {"bin/floor": ratios(walls["bin"], floors),
                 "base/floor": ratios(walls["base"], floors)}
    return {"T": T, "runs": args.runs, "median_s": median, "walls_s": walls,
            "median_cpu_s": {name: statistics.median(c) for name, c in cpus.items()},
            "median_compute_s": {name: statistics.median(c) for name, c in computes.items()},
            "floor_s": floor_s, "floors_s": floors, "floor_range_s": [min(floors), max(floors)],
            "dgemm_gflops": statistics.median(rates), "dgemm_gflops_per_round": rates,
            "load_average": loads,
            "base/floor": median["base"] / floor_s, "bin/floor": median["bin"] / floor_s,
            "bin/floor_per_round": per_round["bin/floor"],
            "base/floor_per_round": per_round["base/floor"],
            "bin/floor_median_of_rounds": statistics.median(per_round["bin/floor"]),
            "numpy/base": median["numpy"] / median["base"],
            "numpy/bin": median["numpy"] / median["bin"],
            "numpy_full/base": median["numpy_full"] / median["base"],
            "numpy_full/bin": median["numpy_full"] / median["bin"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", required=True, help="the attnscope to compare against (main's)")
    p.add_argument("--bin", required=True, help="the attnscope measured")
    p.add_argument("--stages", required=True,
                   help="bench_stages with --floor-only, built against --bin's core")
    p.add_argument("-T", type=int, nargs="+", default=[256, 512, 1024], help="T = d values")
    p.add_argument("-L", dest="depth", type=int, default=8)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    for T in args.T:
        print(json.dumps(compare(args, T, env)), flush=True)


if __name__ == "__main__":
    main()
