#!/usr/bin/python3
"""The cost model's estimates against the clock (issue 12).

    /usr/bin/python3 bench/estimate.py --bin build/attnscope [--quick] [--only block]
        [--block-sizes "256 512 1024"]

Runs `attnscope --batch --verbose` for the configurations the benchmark uses (bench.py's
table: T = d in BENCH_SIZES, softmax and markov, gap off and center, L = BENCH_DEPTH; its
thread comparison: OPENBLAS_NUM_THREADS=1 and 2, one lane; its cross-check: T = d = 256,
seeds 1..3), a few more shapes (ensembles, deep networks, masks, LayerNorm, skips, the
width sweep, other kinds and gap modes) and every block feature (issue 21: heads 1 and 8,
W^O, MLP relu and gelu at ratio 4, pre-LN, mimetic, cutting-skip, each mask and gap mode,
an ensemble) at T = d in --block-sizes, L = BLOCK_DEPTH (4).  --only picks sections.  --verbose prints the estimate before
computing and the time taken after, both from inside the process; the ratio time/estimate
is within x2 when it lies in [0.5, 2].  Prints Markdown: one row per configuration, then the
share within x2 (the target: at least 90% of the benchmark's configurations).

Standard library only.  Reports, never fails: exit 0 whatever the numbers are.  The machine
is shared: the load average is printed, and the estimate follows the load only as far as
the rate timed at start saw it.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ESTIMATE = re.compile(r"^attnscope: estimate ([0-9.e+-]+) s for .*\(dgemm at ([0-9.]+) GFLOP/s")
ACTUAL = re.compile(r"^attnscope: computed in ([0-9.e+-]+) s \(estimate ([0-9.e+-]+) s\)")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(binary, args, env_extra):
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    env.update(env_extra)
    p = subprocess.run([binary, "--batch", "--verbose"] + args, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    estimate = actual = rate = None
    for line in p.stderr.splitlines():
        m = ESTIMATE.match(line)
        if m:
            estimate, rate = float(m.group(1)), float(m.group(2))
        m = ACTUAL.match(line)
        if m:
            actual = float(m.group(1))
    if p.returncode != 0 or estimate is None or actual is None:
        log(f"  failed (exit {p.returncode}): {p.stderr.strip()[:200]}")
        return None
    return estimate, actual, rate


def bench_configurations(quick):
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "128 256 512 1024 2048").split()]
    if quick:
        sizes = [s for s in sizes if s <= 512]
    depth = os.environ.get("BENCH_DEPTH", "8")
    rows = []
    for T in sizes:
        for kind in ("softmax", "markov"):
            for gap in ("off", "center"):
                rows.append((f"table T = d = {T}, {kind}, gap {gap}",
                             ["-T", str(T), "-d", str(T), "-L", depth, "-a", kind, "-g", gap,
                              "--seed", "1"], {}))
    for T in (256, 1024):
        if quick and T > 512:
            continue
        for threads in ("1", "2"):
            rows.append((f"threads T = d = {T}, OPENBLAS_NUM_THREADS={threads}",
                         ["-T", str(T), "-d", str(T), "-L", depth, "--seed", "1"],
                         {"OPENBLAS_NUM_THREADS": threads}))
    for kind in ("softmax", "markov"):
        for gap in ("off", "center"):
            for seed in ("2", "3"):  # seed 1 is the table's row
                rows.append((f"check T = d = 256, {kind}, gap {gap}, seed {seed}",
                             ["-T", "256", "-d", "256", "-L", depth, "-a", kind, "-g", gap,
                              "--seed", seed], {}))
    return rows


def other_configurations(quick):
    rows = [
        ("ensemble T = d = 256, L = 8, 8 seeds", ["-T", "256", "-d", "256", "--seeds", "8"]),
        ("deep T = d = 128, L = 64", ["-T", "128", "-d", "128", "-L", "64"]),
        ("deep T = d = 256, L = 32, gap center", ["-T", "256", "-d", "256", "-L", "32",
                                                  "-g", "center"]),
        ("wide T = 128, d = 1024", ["-T", "128", "-d", "1024"]),
        ("causal mask T = d = 512", ["-T", "512", "-d", "512", "-m", "causal"]),
        ("window mask T = d = 512", ["-T", "512", "-d", "512", "-m", "window", "-w", "8"]),
        ("LayerNorm + skip T = d = 512", ["-T", "512", "-d", "512", "-n", "ln", "-k", "plain"]),
        ("relu T = d = 512", ["-T", "512", "-d", "512", "-a", "relu"]),
        ("sigmoid T = d = 512", ["-T", "512", "-d", "512", "-a", "sigmoid"]),
        ("identity T = d = 512", ["-T", "512", "-d", "512", "-a", "identity"]),
        ("gap deflate T = d = 256", ["-T", "256", "-d", "256", "-g", "deflate"]),
        ("gap outliers T = d = 256", ["-T", "256", "-d", "256", "-g", "outliers"]),
        ("width sweep T = d = 512, layer 2", ["-T", "512", "-d", "512", "-l", "2",
                                              "--sweep-T"]),
        ("markov T = d = 1024, L = 4, 4 seeds", ["-T", "1024", "-d", "1024", "-L", "4",
                                                 "-a", "markov", "--seeds", "4"]),
    ]
    if quick:
        rows = [r for r in rows if "1024" not in r[1]]
    return [(name, args, {}) for name, args in rows]


# Every block feature of issue 13 (each alone, over the default layer: softmax, one head,
# identity W^O, no MLP, post-LN off, normal init, full mask, gap off, one seed), issue 21's
# criterion: at least 90% of these within x2 at each size.
BLOCK_FEATURES = [
    ("heads 1", []),
    ("heads 8", ["--heads", "8"]),
    ("W^O gaussian", ["--wo", "gaussian"]),
    ("MLP relu, ratio 4", ["--mlp", "relu", "--mlp-ratio", "4"]),
    ("MLP gelu, ratio 4", ["--mlp", "gelu", "--mlp-ratio", "4"]),
    ("pre-LN + skip", ["-n", "ln", "--ln-place", "pre", "-k", "plain"]),
    ("mimetic, W^O gaussian", ["--init", "mimetic", "--wo", "gaussian"]),
    ("cutting-skip", ["--init", "cutting-skip"]),
    ("causal mask", ["-m", "causal"]),
    ("window mask", ["-m", "window", "-w", "8"]),
    ("window-causal mask", ["-m", "window-causal", "-w", "8"]),
    ("gap center", ["-g", "center"]),
    ("gap uniform", ["-g", "uniform"]),
    ("gap deflate", ["-g", "deflate"]),
    ("gap outliers", ["-g", "outliers"]),
    ("causal mask, gap outliers", ["-m", "causal", "-g", "outliers"]),
    ("ensemble, 4 seeds", ["--seeds", "4"]),
]


def block_configurations(sizes):
    depth = os.environ.get("BLOCK_DEPTH", "4")
    rows = []
    for T in sizes:
        for name, extra in BLOCK_FEATURES:
            rows.append((f"T = d = {T}, {name}",
                         ["-T", str(T), "-d", str(T), "-L", depth, "--seed", "1"] + extra, {}))
    return rows


def section(title, binary, rows):
    print(f"\n### {title}\n")
    print("| configuration | estimate s | actual s | actual/estimate | within x2 | "
          "dgemm GFLOP/s |")
    print("|---|---:|---:|---:|---|---:|")
    within = total = 0
    for name, args, env in rows:
        log(f"  {name} ...")
        r = run(binary, args, env)
        if r is None:
            print(f"| {name} | n/a | n/a | n/a | failed | n/a |")
            continue
        estimate, actual, rate = r
        ratio = actual / estimate if estimate > 0 else float("inf")
        ok = 0.5 <= ratio <= 2.0
        within += ok
        total += 1
        print(f"| {name} | {estimate:.3g} | {actual:.3g} | {ratio:.2f} | "
              f"{'yes' if ok else 'NO'} | {rate:.1f} |", flush=True)
    share = within / total if total else float("nan")
    print(f"\nWithin x2: {within} of {total} ({100 * share:.0f}%)")
    return within, total


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--quick", action="store_true", help="T <= 512 only (about a minute)")
    ap.add_argument("--only", choices=("bench", "other", "block"), action="append",
                    help="run only these sections (repeatable; default: all)")
    ap.add_argument("--block-sizes", default="256 512 1024",
                    help="T = d of the block features' section (default: 256 512 1024)")
    args = ap.parse_args(argv)
    sections = set(args.only or ("bench", "other", "block"))
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        log(f"estimate: {binary} is not built; nothing measured")
        return 0
    started = time.time()
    print(f"## Cost model: estimate against the clock ({time.strftime('%Y-%m-%d %H:%M')}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")
    within = total = 0
    if "bench" in sections:
        w, t = section("The benchmark's configurations (bench.py: table, threads, cross-check)",
                       binary, bench_configurations(args.quick))
        within, total = within + w, total + t
    if "other" in sections:
        w, t = section("Other shapes", binary, other_configurations(args.quick))
        within, total = within + w, total + t
    if "block" in sections:
        sizes = [int(x) for x in args.block_sizes.split()]
        if args.quick:
            sizes = [x for x in sizes if x <= 512]
        w, t = section(f"Block features (issue 21), L = {os.environ.get('BLOCK_DEPTH', '4')}",
                       binary, block_configurations(sizes))
        within, total = within + w, total + t
    print(f"\nAll: {within} of {total} within x2; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
