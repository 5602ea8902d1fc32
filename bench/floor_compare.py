#!/usr/bin/python3
"""Two attnscope binaries and the numpy reference against issue 25's floor, interleaved.

    /usr/bin/python3 bench/floor_compare.py --base /work/main/build/attnscope \\
        --bin build/attnscope --stages build/bench/bench_stages -T 1024 --runs 5

Per size: one warm-up round, then --runs rounds of `BASE --batch`, `BIN --batch` and
bench/numpy_ref.py with the same flags (-T T -d T -L 8 -a softmax -g off --seed 1), one after
the other, so that a change of load hits all three; medians of the wall times.  Then
`STAGES ... --reps 3` (bench_stages, built by bench/run.sh) for the floor measured in the same
run.  OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed, as bench/run.sh does.  Prints one
JSON object per size, with the 1-minute load average before and after each round.
Benchmarks report: timings are never a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def compare(args, T, env):
    flags = ["-T", str(T), "-d", str(T), "-L", str(args.depth), "-a", "softmax", "-g", "off",
             "--seed", "1"]
    programs = {"base": [args.base, "--batch"] + flags, "bin": [args.bin, "--batch"] + flags,
                "numpy": ["/usr/bin/python3", os.path.join(ROOT, "bench", "numpy_ref.py")] + flags}
    walls = {name: [] for name in programs}
    loads = [load_average()]
    for round_ in range(args.runs + 1):  # round 0 warms up
        for name, argv in programs.items():
            start = time.perf_counter()
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            if round_:
                walls[name].append(time.perf_counter() - start)
        loads.append(load_average())
    stages = subprocess.run([args.stages] + flags + ["--reps", "3"], env=env,
                            capture_output=True, text=True, check=True)
    floor = json.loads(stages.stdout)
    median = {name: statistics.median(w) for name, w in walls.items()}
    floor_s = floor["floor_ms"] / 1e3
    return {"T": T, "runs": args.runs, "median_s": median, "walls_s": walls,
            "floor_s": floor_s, "dgemm_gflops": floor["dgemm_gflops"], "load_average": loads,
            "base/floor": median["base"] / floor_s, "bin/floor": median["bin"] / floor_s,
            "numpy/base": median["numpy"] / median["base"],
            "numpy/bin": median["numpy"] / median["bin"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", required=True, help="the attnscope to compare against (main's)")
    p.add_argument("--bin", required=True, help="the attnscope measured")
    p.add_argument("--stages", required=True, help="bench_stages built against --bin's core")
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
