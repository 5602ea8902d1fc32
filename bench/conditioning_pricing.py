#!/usr/bin/python3
"""The conditioning's estimate against the clock, by initialisation (issue 25).

    /usr/bin/python3 bench/conditioning_pricing.py BIN RUNS 'ARGS' ['ARGS' ...]

Runs `BIN --batch --verbose --no-confirm ARGS` with and without --conditioning, RUNS times
each, and prints one Markdown row per configuration: the conditioning's estimate (the
difference of the two estimates), the ceiling --verbose states where layers may seek
s_min(K) unpriced (estimate + "up to X s more"), the actual wall time (difference of the two
"computed in" times) and CPU time (of the two processes), their medians, the ratio
actual/estimate, and how many layers of both networks took s_min by Lanczos or on the
Kronecker path or stopped at the lower bound (the last run's warnings), with the load average
after the row.

Standard library only.  Reports, never fails.  Wall times follow the load; the estimate
follows it only as far as the rate timed at start saw it.
"""
import json
import os
import re
import statistics
import subprocess
import sys


def run(binary, args):
    before = os.times()
    p = subprocess.run([binary, '--batch', '--verbose', '--no-confirm'] + args,
                       capture_output=True, text=True)
    after = os.times()
    estimate = float(re.search(r'estimate ([0-9.e+-]+) s', p.stderr).group(1))
    took = float(re.search(r'computed in ([0-9.e+-]+) s', p.stderr).group(1))
    more = re.search(r'up to ([0-9.e+-]+) s more', p.stderr)
    cpu = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    return estimate, took, cpu, float(more.group(1)) if more else 0.0, p.stdout


def layers(warnings, key):
    """The layer count of the warning that holds key ("at N layers")."""
    total = 0
    for w in warnings:
        count = re.search(r'at (\d+)(?: of \d+)? layers?', w)
        if key in w and count:
            total += int(count.group(1))
    return total


def main():
    binary, runs = sys.argv[1], int(sys.argv[2])
    print('| configuration | estimate s | ceiling s | actual s (wall) | CPU s | actual/estimate '
          '| layers: Lanczos / Kronecker / at the bound | load |')
    print('|---|---:|---:|---:|---:|---:|---|---:|')
    for text in sys.argv[3:]:
        args = text.split()
        rows = []
        for _ in range(runs):
            e0, t0, c0, _, _ = run(binary, args)
            e1, t1, c1, more, out = run(binary, args + ['--conditioning'])
            rows.append((e1 - e0, t1 - t0, c1 - c0, more))
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        warnings = json.loads(out)['conditioning']['warnings']
        print(f"| `{text}` | {med[0]:.3g} | {med[0] + med[3]:.3g} | {med[1]:.3g} | {med[2]:.3g} "
              f"| {med[1] / med[0]:.2f} | {layers(warnings, 's_min(K) by Lanczos on K^T K at')} / "
              f"{layers(warnings, 'on the Kronecker path')} / {layers(warnings, 's_min not sought')} "
              f"| {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == '__main__':
    main()
