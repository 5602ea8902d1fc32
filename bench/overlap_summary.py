#!/usr/bin/env python3
"""Where the two idle cores' clock of bench/overlap_clock.c idles, run by run (issue 25).

    OVERLAP_TRACE=1 build/bench/overlap_clock T reps 2> trace.txt
    python3 bench/overlap_summary.py trace.txt

For each run of batch's schedule (the one with the eigenvalues beside): the caller alone
before the first three pairs (X0's pair, layer 1's q.k pair, layer 1's networks; where layer 1's
q.k work and attention run beside X0, as since branch layer1lane: X0's pair, layer 1's networks,
layer 2's) and before all pairs, the pairs' imbalance (the slower lane less the faster,
summed), and the stretch while dgeev runs beside: its CPU seconds, the caller's work in turn
until the join, the lane thread's idle time before it (0: the caller waited for the join instead), and the answers
to the run's questions (each "running" sends the next step's lanes in turn).
"""
import re
import sys


def runs(lines):
    """The trace's runs: a pair's clock going back to the start begins the next run."""
    run, last = [], -1.0
    for line in lines:
        if line.startswith("pair at"):
            at = float(line.split()[2])
            if at < last:
                yield run
                run = []
            last = at
        run.append(line)
    if run:
        yield run


def numbers(line):
    return [float(x) for x in re.findall(r"\d+\.\d+", line)]


def summary(run):
    pairs = [numbers(l)[:4] for l in run if l.startswith("pair at")]
    joined = [numbers(l) for l in run if re.match(r"beside: from", l)]
    if not joined:
        return None  # the screen's schedule
    start, dgeev, join = joined[0]
    answers = [l.rsplit(": ", 1)[1] for l in run if l.startswith("beside: asked")]
    in_turn = join - start
    return (
        f"alone before the first pairs {[p[1] for p in pairs[:3]]} s, before all "
        f"{sum(p[1] for p in pairs):.3f} s; pairs' imbalance {sum(abs(p[2] - p[3]) for p in pairs):.3f} s; "
        f"dgeev {dgeev:.3f} s, caller in turn {in_turn:.3f} s, lane thread idle "
        f"{in_turn - dgeev:+.3f} s; answers {answers}"
    )


def main():
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    for run in runs(lines):
        line = summary(run)
        if line:
            print(line)


if __name__ == "__main__":
    main()
