#!/usr/bin/python3
"""The softmax bulk's largest modulus against the circle's finite-T edge (docs/model.md §3).

For T = d in 64, 128, 256, 512 and seeds 1..20, the first layer's sqrt(T)|lambda_2| / sigma
(eigenvalues from `--batch -L 1`), with real Ginibre matrices of variance 1/n (numpy, seeded)
as the control.  Usage: bench/circle_edge.py BIN [sigma_qk] [attention]
"""
import json
import math
import subprocess
import sys

import numpy as np


def bulk_ratios(binary, T, sigma_qk, attention, seeds):
    ratios = []
    for seed in seeds:
        run = subprocess.run([binary, '--batch', '-T', str(T), '-d', str(T), '-L', '1', '-a',
                              attention, '-s', sigma_qk, '--seed', str(seed)],
                             capture_output=True, text=True, check=True)
        d = json.loads(run.stdout)
        lam = sorted((complex(a, b) for a, b in d['eigenvalues']), key=abs, reverse=True)
        ratios.append(math.sqrt(T) * abs(lam[1]) / d['theory']['circle_radius'])
    return np.array(ratios)


def main():
    binary = sys.argv[1]
    sigma_qk = sys.argv[2] if len(sys.argv) > 2 else '1'
    attention = sys.argv[3] if len(sys.argv) > 3 else 'softmax'
    rng = np.random.default_rng(12345)
    print('T  | %s median [min, max] | Ginibre median (std) | Rider mean' % attention)
    for T in (64, 128, 256, 512):
        r = bulk_ratios(binary, T, sigma_qk, attention, range(1, 21))
        g = np.array([abs(np.linalg.eigvals(rng.standard_normal((T, T)) / math.sqrt(T))).max()
                      for _ in range(400 if T <= 256 else 150)])
        gamma = math.log(T / (2 * math.pi)) - 2 * math.log(math.log(T))
        rider = (1 + math.sqrt(gamma / (4 * T)) + 0.5772 / math.sqrt(4 * T * gamma)
                 if gamma > 0 else float('nan'))
        print('%d | %.3f [%.3f, %.3f] | %.3f (%.3f) | %.3f' %
              (T, np.median(r), r.min(), r.max(), np.median(g), g.std(), rider), flush=True)


main()
