#!/usr/bin/python3
"""Benchmark driver behind bench/run.sh (issue 4).  Standard library only.

Modes (combine freely; no mode flag = --table --threads --check):
  --table    medians of end-to-end `attnscope --batch` wall time and peak RSS, the numpy
             reference timed in the same run (interleaved), their ratio, and attnscope's
             per-stage times from bench_stages
  --threads  attnscope with OPENBLAS_NUM_THREADS unset (its default), 1 and 2 at
             T = d = 256 and 1024
  --check    attnscope and numpy_ref at T = d = 256 for 3 seeds: statistics side by side
             (gap off and center per seed: stable ranks, spectra of A and of A - (1/T)11ᵀ)

Environment: BENCH_SIZES ("128 256 512 1024 2048"), BENCH_RUNS (5, runs after one warm-up),
BENCH_BUDGET (45: seconds per program per configuration; a program whose warm-up is slow
gets fewer runs, never less than one; 0 = always BENCH_RUNS), BENCH_DEPTH (8).
The caller (run.sh) removes OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from the environment
of both programs.  Benchmarks report; this never fails because of a number.
"""
import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMPY_REF = os.path.join(ROOT, "bench", "numpy_ref.py")
PYTHON = "/usr/bin/python3"
SLOW = 5.0  # seconds: a warm-up this slow counts as a sample (start-up effects are noise)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


OWN_CPU = [0.0]  # CPU seconds of the children this driver ran
args_stages_present = [False]  # a stage harness was given


def cpu_busy():
    """CPU seconds all processes of the machine have used (from /proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class OtherLoad:
    """Average number of cores used by processes other than ours over a stretch of time:
    the interference the numbers of that stretch suffered (0 on a quiet machine)."""

    def __init__(self):
        self.busy, self.own = cpu_busy(), OWN_CPU[0] + self.self_cpu()
        self.start = time.perf_counter()

    @staticmethod
    def self_cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def cores(self):
        busy = cpu_busy()
        wall = time.perf_counter() - self.start
        if busy is None or self.busy is None or wall <= 0:
            return None
        own = OWN_CPU[0] + self.self_cpu() - self.own
        return max(0.0, (busy - self.busy - own) / wall)


def run_timed(argv, env=None):
    """Runs argv; returns (wall seconds, peak RSS in KiB, stdout text) or raises."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        OWN_CPU[0] += usage.ru_utime + usage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: "
                               f"{err.read().strip()[:300]}")
        return wall, usage.ru_maxrss, out.read()


def config_args(T, kind, gap, depth, seed=1):
    return ["-T", str(T), "-d", str(T), "-L", str(depth), "-a", kind, "-g", gap,
            "--seed", str(seed)]


class Program:
    """One command measured repeatedly: wall times, peak RSS, parsed JSON of the first run."""

    def __init__(self, name, argv, env):
        self.name, self.argv, self.env = name, argv, env
        self.walls, self.rss, self.docs = [], [], []
        self.target = 0
        self.error = None

    def once(self):
        wall, rss, text = run_timed(self.argv, self.env)
        return wall, rss, json.loads(text)

    def warm_up(self, runs, budget):
        try:
            wall, rss, doc = self.once()
        except (RuntimeError, OSError, ValueError) as e:
            self.error = str(e)
            return
        self.docs.append(doc)
        self.target = runs
        if budget > 0:
            self.target = max(1, min(runs, int(budget // wall)))
        if wall > SLOW:  # counts: one more run would change nothing but the clock
            self.walls.append(wall)
            self.rss.append(rss)

    def wants_more(self):
        return self.error is None and len(self.walls) < self.target

    def sample(self):
        try:
            wall, rss, doc = self.once()
        except (RuntimeError, OSError, ValueError) as e:
            self.error = str(e)
            return
        self.walls.append(wall)
        self.rss.append(rss)
        self.docs.append(doc)

    def median_ms(self):
        return 1e3 * statistics.median(self.walls) if self.walls else None

    def rss_mib(self):
        return max(self.rss) / 1024.0 if self.rss else None


def measure(programs, runs, budget):
    """Warm-up each program, then interleave: A B A B ... until each has its samples."""
    for p in programs:
        p.warm_up(runs, budget)
    while any(p.wants_more() for p in programs):
        for p in programs:
            if p.wants_more():
                p.sample()


def fmt(x, digits=0, width=0):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a".rjust(width)
    return f"{x:.{digits}f}".rjust(width)


def env_with(base, **extra):
    env = dict(base)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def stages(harness, T, kind, gap, depth, reps, env, model_run):
    if not harness:
        return None
    argv = [harness] + config_args(T, kind, gap, depth) + ["--reps", str(reps)]
    if model_run:
        argv.append("--model-run")
    try:
        _, _, text = run_timed(argv, env)
        return json.loads(text)
    except (RuntimeError, OSError, ValueError) as e:
        log(f"bench_stages failed: {e}")
        return None


def harness_reps(program):
    """Repetitions for bench_stages: as many as the program got, at most 3 above 1 s."""
    t = program.median_ms()
    reps = max(1, program.target)
    return reps if t is not None and t < 1000 else min(3, reps)


def process_floor(argv, env, runs=5):
    """Median wall ms of a command that computes nothing (start-up, libraries, imports)."""
    try:
        return 1e3 * statistics.median(run_timed(argv, env)[0] for _ in range(runs))
    except (RuntimeError, OSError):
        return None


def same_curve(a, b, layers=3, tol=1e-6):
    """The first `layers` stable ranks agree.  Deeper softmax layers without LayerNorm are
    nearly one-hot and amplify last-bit differences (a different BLAS order), so only the
    well-conditioned start of the curve tells whether the harness computes the same thing."""
    if a is None or b is None or len(a) != len(b):
        return False
    for x, y in zip(a[:layers], b[:layers]):
        if x is None or y is None:
            if x is not y:
                return False
        elif abs(x - y) > tol * max(1.0, abs(x)):
            return False
    return True


# ---- the table ---------------------------------------------------------------------------

def table(args, env):
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "128 256 512 1024 2048").split()]
    runs = max(1, int(os.environ.get("BENCH_RUNS", "5")))
    budget = float(os.environ.get("BENCH_BUDGET", "45"))
    depth = int(os.environ.get("BENCH_DEPTH", "8"))
    rows = []
    for T in sizes:
        for kind in ("softmax", "markov"):
            for gap in ("off", "center"):
                log(f"  T = d = {T}, {kind}, gap {gap} ...")
                cfg = config_args(T, kind, gap, depth)
                a = Program("attnscope", [args.bin, "--batch"] + cfg, env)
                n = Program("numpy", [PYTHON, NUMPY_REF] + cfg, env) if args.numpy else None
                load = OtherLoad()
                measure([p for p in (a, n) if p], runs, budget)
                t_a = a.median_ms()
                st = None
                if gap == "off" or t_a is None or t_a < 1e3 * budget / 4 or budget <= 0:
                    # Gap center costs what gap off costs (one O(T²) subtraction more): at
                    # the slow sizes its stages are not timed again, to keep the run short.
                    st = stages(args.stages, T, kind, gap, depth, harness_reps(a), env,
                                model_run=bool(t_a) and t_a < 1000)
                if st and a.docs and not same_curve(st.get("stable_rank"),
                                                    a.docs[0].get("stable_rank")):
                    st["diverged"] = True
                rows.append({"T": T, "kind": kind, "gap": gap, "a": a, "n": n, "stages": st,
                             "load": load.cores()})
    print_table(rows, depth, runs, budget)
    return rows


def print_table(rows, depth, runs, budget):
    print(f"\n### End to end (L = {depth}; medians of up to {runs} runs after a warm-up, "
          f"budget {budget:g} s per program and configuration)\n")
    print("| T = d | attention | gap | n | attnscope ms | attnscope MiB | numpy ms | "
          "numpy compute ms | numpy MiB | numpy/attnscope | compute/attnscope | other load |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a, n = r["a"], r["n"]
        t_a = a.median_ms()
        t_n = n.median_ms() if n else None
        c_n = None
        if n and n.docs:
            c_n = 1e3 * statistics.median(d["elapsed"] for d in n.docs[-max(1, len(n.walls)):])
        ratio = t_n / t_a if t_a and t_n else None
        cratio = c_n / t_a if t_a and c_n else None
        counts = f"{len(a.walls)}/{len(n.walls) if n else 0}"
        print(f"| {r['T']} | {r['kind']} | {r['gap']} | {counts} | {fmt(t_a, 1)} | "
              f"{fmt(a.rss_mib(), 1)} | {fmt(t_n, 1)} | {fmt(c_n, 1)} | "
              f"{fmt(n.rss_mib() if n else None, 1)} | {fmt(ratio, 2)} | {fmt(cratio, 2)} | "
              f"{fmt(r['load'], 2)} |")
        for p in (a, n):
            if p and p.error:
                print(f"|   | {p.name} failed: {p.error[:120]} |")
    print("\n### attnscope per stage (bench_stages, in-process medians, ms)\n")
    print("| T = d | attention | gap | reps | input | weights | attention | forward | spectra | "
          "stable rank | sum | Model_run | --batch | floor | --batch/floor |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        st = r["stages"]
        if not st:
            why = "as gap off (not timed again at this size)" if r["gap"] != "off" and \
                args_stages_present[0] else "n/a (no stage harness)"
            print(f"| {r['T']} | {r['kind']} | {r['gap']} | {why} |")
            continue
        s = st["stages_ms"]
        mark = " (harness diverged from attnscope!)" if st.get("diverged") else ""
        t_a, t_floor = r["a"].median_ms(), st.get("floor_ms")
        over_floor = t_a / t_floor if t_a and t_floor else None
        print(f"| {r['T']} | {r['kind']} | {r['gap']} | {st['reps']} | {fmt(s['input'], 1)} | "
              f"{fmt(s['weights'], 1)} | {fmt(s['attention'], 1)} | {fmt(s['forward'], 1)} | "
              f"{fmt(s['spectra'], 1)} | {fmt(s['stable_rank'], 1)} | {fmt(s['total'], 1)} | "
              f"{fmt(st.get('model_run_ms'), 1)} | {fmt(r['a'].median_ms(), 1)}{mark} | "
              f"{fmt(st.get('floor_ms'), 1)} | {fmt(over_floor, 2)} |")


# ---- OpenBLAS threads ----------------------------------------------------------------------

def threads(args, env):
    """attnscope's default (OPENBLAS_NUM_THREADS unset: at this writing, two lanes on two
    threads with single-threaded BLAS) against OPENBLAS_NUM_THREADS=1 and =2 (one lane)."""
    runs = max(1, int(os.environ.get("BENCH_RUNS", "5")))
    budget = float(os.environ.get("BENCH_BUDGET", "45"))
    depth = int(os.environ.get("BENCH_DEPTH", "8"))
    print(f"\n### OpenBLAS threads (attnscope --batch, softmax, gap off, L = {depth}; median ms; "
          f"stages: bench_stages, sequential, with that many BLAS threads)\n")
    print("| T = d | OPENBLAS_NUM_THREADS | n | --batch ms | weights | attention | forward | "
          "spectra | stable rank | sum | other load |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = {k: v for k, v in env.items() if k != "OPENBLAS_NUM_THREADS"}
    settings = [("unset (default)", base), ("1", env_with(base, OPENBLAS_NUM_THREADS=1)),
                ("2", env_with(base, OPENBLAS_NUM_THREADS=2))]
    for T in (256, 1024):
        progs = [Program(name, [args.bin, "--batch"] + config_args(T, "softmax", "off", depth), e)
                 for name, e in settings]
        log(f"  OPENBLAS_NUM_THREADS unset, 1, 2 at T = d = {T} ...")
        load = OtherLoad()
        measure(progs, runs, budget)
        cores = load.cores()
        for (name, e), p in zip(settings, progs):
            st = None
            if "OPENBLAS_NUM_THREADS" in e:
                st = stages(args.stages, T, "softmax", "off", depth, harness_reps(p), e, False)
            s = st["stages_ms"] if st else {}
            print(f"| {T} | {name} | {len(p.walls)} | {fmt(p.median_ms(), 1)} | "
                  f"{fmt(s.get('weights'), 1)} | {fmt(s.get('attention'), 1)} | "
                  f"{fmt(s.get('forward'), 1)} | {fmt(s.get('spectra'), 1)} | "
                  f"{fmt(s.get('stable_rank'), 1)} | {fmt(s.get('total'), 1)} | "
                  f"{fmt(cores, 2)} |")


# ---- cross-implementation check ------------------------------------------------------------

def percentile_from_top(values, fraction):
    """The value with `fraction` of the values above it (robust to a few extreme entries)."""
    v = sorted(values, reverse=True)
    return v[min(len(v) - 1, int(fraction * len(v)))]


def spectrum_stats(doc, T, prefix):
    """Statistics of the shown matrix that do not depend on the random stream.  The entries
    of softmax/markov attention are log-normal-like, so the largest bulk values depend on
    single large entries; the 98th percentile and the Frobenius norm are the robust ones."""
    if "eigenvalue_moduli" in doc:
        moduli = doc["eigenvalue_moduli"]
    else:
        moduli = sorted((math.hypot(re, im) for re, im in doc["eigenvalues"]), reverse=True)
    sv = doc["singular_values"]
    root = math.sqrt(T)
    bulk_eig = [m for m in moduli if m < 0.5] or [0.0]
    bulk_sv = [s for s in sv if s < 0.5] or [0.0]
    out = {}
    if prefix == "A":
        out["A: λ1 modulus (outlier)"] = moduli[0]
        out["A: s1 (outlier)"] = sv[0]
    out[f"{prefix}: √T·bulk max λ modulus"] = root * max(bulk_eig)
    out[f"{prefix}: √T·bulk λ modulus 98th pct"] = root * percentile_from_top(bulk_eig, 0.02)
    out[f"{prefix}: √T·bulk s max"] = root * max(bulk_sv)
    out[f"{prefix}: √T·bulk s 98th pct"] = root * percentile_from_top(bulk_sv, 0.02)
    out[f"{prefix}: bulk ‖·‖_F²"] = sum(s * s for s in bulk_sv)
    return out


def stats(doc_off, doc_center, T):
    """One seed: stable ranks from the gap-off run (network and counterpart), spectra of A
    (gap off) and of A⊥ = A − (1/T)11ᵀ (gap center)."""
    sr, cp = doc_off["stable_rank"], doc_off["counterpart_stable_rank"]
    out = {"sr(Σ1), gap off": sr[1], "sr(Σ1), gap removed": cp[1]}
    if len(sr) > 2:
        out["sr(Σ2), gap off"] = sr[2]
        out["sr(Σ2), gap removed"] = cp[2]
    out.update(spectrum_stats(doc_off, T, "A"))
    out.update(spectrum_stats(doc_center, T, "A⊥"))
    return out


# Relative tolerances (different random streams: statistics only).  A row also passes when the
# difference is within 3 standard errors of the seed-to-seed spread; rows without a tolerance
# (extremes of heavy-tailed quantities) are judged by that alone.
TOLERANCE = {"sr(Σ1), gap off": 0.20, "sr(Σ1), gap removed": 0.20, "sr(Σ2), gap off": 0.20,
             "A: λ1 modulus (outlier)": 0.02, "A: s1 (outlier)": 0.02,
             "A: √T·bulk λ modulus 98th pct": 0.05, "A: √T·bulk s 98th pct": 0.05,
             "A: bulk ‖·‖_F²": 0.05, "A⊥: √T·bulk λ modulus 98th pct": 0.05,
             "A⊥: √T·bulk s 98th pct": 0.05, "A⊥: bulk ‖·‖_F²": 0.05}


def check(args, env):
    T, depth, seeds = 256, int(os.environ.get("BENCH_DEPTH", "8")), (1, 2, 3)
    print(f"\n### Cross-check: attnscope vs numpy_ref at T = d = {T}, L = {depth}, seeds "
          f"{', '.join(map(str, seeds))} (mean ± std over seeds; different RNGs)\n")
    if not args.numpy:
        print("numpy reference unavailable: skipped")
        return True
    print("| attention | statistic | attnscope | numpy | rel. diff | z | tol | ok |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    all_ok = True
    for kind in ("softmax", "markov"):
        per = {"attnscope": [], "numpy": []}
        for seed in seeds:
            docs = {"attnscope": [], "numpy": []}
            try:
                for gap in ("off", "center"):
                    cfg = config_args(T, kind, gap, depth, seed)
                    docs["attnscope"].append(json.loads(
                        run_timed([args.bin, "--batch"] + cfg, env)[2]))
                    docs["numpy"].append(json.loads(run_timed([PYTHON, NUMPY_REF] + cfg, env)[2]))
            except (RuntimeError, OSError, ValueError) as e:
                print(f"| {kind} | run failed: {e} |")
                all_ok = False
                continue
            for name in per:
                per[name].append(stats(docs[name][0], docs[name][1], T))
        if not per["attnscope"] or not per["numpy"]:
            continue
        for key in per["attnscope"][0]:
            va = [s[key] for s in per["attnscope"] if s.get(key) is not None]
            vn = [s[key] for s in per["numpy"] if s.get(key) is not None]
            if not va or not vn:
                continue
            ma, mn = statistics.fmean(va), statistics.fmean(vn)
            sa = statistics.stdev(va) if len(va) > 1 else 0.0
            sn = statistics.stdev(vn) if len(vn) > 1 else 0.0
            rel = abs(ma - mn) / max(abs(ma), abs(mn), 1e-300)
            se = math.sqrt(sa * sa / len(va) + sn * sn / len(vn))
            z = (ma - mn) / se if se > 0 else (0.0 if ma == mn else math.inf)
            tol = TOLERANCE.get(key)
            ok = (tol is not None and rel <= tol) or abs(z) <= 3
            all_ok &= ok
            print(f"| {kind} | {key} | {ma:.4g} ± {sa:.2g} | {mn:.4g} ± {sn:.2g} | {rel:.3f} | "
                  f"{z:+.1f} | {fmt(tol, 2)} | {'yes' if ok else 'NO'} |")
    print(f"\nCross-check verdict: {'agree' if all_ok else 'DISAGREE (see rows marked NO)'}")
    return all_ok


# ---- main ----------------------------------------------------------------------------------

def header(args, env):
    load = os.getloadavg()
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    core_a = core_n = "?"
    if args.stages:
        try:
            _, _, t = run_timed([args.stages, "-T", "8", "-d", "8", "-L", "1", "--reps", "1"],
                                env)
            core_a = json.loads(t).get("openblas_core", "?")
        except (RuntimeError, OSError, ValueError):
            pass
    if args.numpy:
        try:
            _, _, t = run_timed([PYTHON, NUMPY_REF, "-T", "8", "-d", "8", "-L", "1"], env)
            info = json.loads(t).get("openblas") or {}
            core_n = f"{info.get('core', '?')} ({info.get('library', '?')}, " \
                     f"{info.get('threads', '?')} threads)"
        except (RuntimeError, OSError, ValueError):
            pass
    print(f"## attnscope benchmark — {time.strftime('%Y-%m-%d %H:%M')}, git {rev}")
    print(f"- machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
          f"load average at start {load[0]:.2f} {load[1]:.2f}")
    print(f"- binary: {args.source or args.bin}; OpenBLAS core (attnscope, via bench_stages): {core_a}")
    print(f"- numpy reference: {PYTHON} numpy; OpenBLAS core: {core_n}")
    unset = [k for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ]
    floor_a = process_floor([args.bin, "--version"], env)
    floor_n = process_floor([PYTHON, "-c", "import numpy"], env) if args.numpy else None
    print(f"- process floor (median wall ms, nothing computed): `attnscope --version` "
          f"{fmt(floor_a, 1)}, `python3 -c 'import numpy'` {fmt(floor_n, 1)}")
    print(f"- OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for both programs"
          f"{' (still set: ' + ', '.join(unset) + ')' if unset else ''}; "
          f"OPENBLAS_NUM_THREADS={env.get('OPENBLAS_NUM_THREADS', '(unset: all cores)')}")


def main(argv):
    p = argparse.ArgumentParser(description="attnscope benchmark driver (see bench/README.md)")
    p.add_argument("--bin", required=True)
    p.add_argument("--stages", default="", help="bench_stages binary ('' = none)")
    p.add_argument("--source", default="", help="where --bin was copied from (for the header)")
    p.add_argument("--table", action="store_true")
    p.add_argument("--threads", action="store_true")
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    if not (args.table or args.threads or args.check):
        args.table = args.threads = args.check = True
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    args.numpy = subprocess.run([PYTHON, "-c", "import numpy"], env=env,
                                capture_output=True).returncode == 0
    if not args.numpy:
        log(f"bench: {PYTHON} has no numpy (apt-get install python3-numpy): "
            "numpy columns are n/a")
    args_stages_present[0] = bool(args.stages)
    started = time.perf_counter()
    header(args, env)
    if args.table:
        table(args, env)
    if args.threads:
        threads(args, env)
    if args.check:
        check(args, env)
    load = os.getloadavg()
    print(f"\n(total {time.perf_counter() - started:.0f} s; load average at end "
          f"{load[0]:.2f} {load[1]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
