#!/usr/bin/python3
"""numpy reference for `attnscope --batch` (docs/model.md §1, 2): what a careful researcher writes.

Run it with Debian's numpy:  /usr/bin/python3 bench/numpy_ref.py -T 256 -d 256 -L 8

Same model and flags as attnscope for the configurations the benchmark uses: full mask, no
skip, no LayerNorm; attention softmax or markov; gap off or center.  Per layer fresh
W^Q, W^K ~ N(0, sigma_qk^2) and W^V ~ N(0, 1) (d x d), shared by the network and its
counterpart (gap removal toggled).  Stable rank of Sigma_l = X Xᵀ from the singular values of
X (np.linalg.svd, compute_uv=False): sr = sum s^4 / s1^4.  Eigenvalues (np.linalg.eigvals) and
singular values (np.linalg.svd) of the attention matrix applied at the shown layer.

The random numbers come from numpy's PCG64, not attnscope's streams: compare statistics only.
Prints one JSON document with the fields of attnscope's batch output that it computes, plus
"elapsed" (seconds of computation after the imports) and "openblas" (the kernel in use).
"""
import argparse
import ctypes
import json
import math
import sys
import time

import numpy as np

GAPS = ("off", "center")
KINDS = ("softmax", "markov")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-T", "--tokens", type=int, default=256)
    p.add_argument("-d", "--width", type=int, default=256)
    p.add_argument("-L", "--depth", type=int, default=8)
    p.add_argument("-s", "--sigma-qk", type=float, default=1.0)
    p.add_argument("-a", "--attention", choices=KINDS, default="softmax")
    p.add_argument("-g", "--gap", choices=GAPS, default="off")
    p.add_argument("-l", "--layer", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-spectra", action="store_true",
                   help="skip eigvals/svd of the shown layer (for timing the forward pass)")
    a = p.parse_args(argv)
    if not 2 <= a.tokens <= a.width:
        p.error(f"-T/--tokens {a.tokens}: needs 2 <= T <= d = {a.width}")
    if not 1 <= a.layer <= a.depth:
        p.error(f"-l/--layer {a.layer}: accepted 1..{a.depth}")
    return a


def openblas_kernel():
    """The OpenBLAS core numpy's BLAS runs, read from the loaded library (or None)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line and "/" in line}
        for path in sorted(paths):
            lib = ctypes.CDLL(path)
            if hasattr(lib, "openblas_get_corename"):
                lib.openblas_get_corename.restype = ctypes.c_char_p
                lib.openblas_get_num_threads.restype = ctypes.c_int
                return {"library": path, "core": lib.openblas_get_corename().decode(),
                        "threads": lib.openblas_get_num_threads()}
    except OSError:
        pass
    return None


def softmax_rows(s):
    s = s - s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s


def stable_rank(x):
    """sr(X Xᵀ) = sum s^4 / s1^4 and sr - 1 summed directly (docs/model.md §2)."""
    s = np.linalg.svd(x, compute_uv=False)
    if not np.all(np.isfinite(s)) or s[0] == 0:
        return None, None
    r = (s[1:] / s[0]) ** 4
    rest = float(np.sum(r[::-1]))  # smallest first
    return 1.0 + rest, rest


def run(a):
    T, d, L = a.tokens, a.width, a.depth
    rng = np.random.default_rng(a.seed)

    g = rng.standard_normal((d, T))
    q, r = np.linalg.qr(g)  # reduced: q is d x T
    q *= np.sign(np.diag(r))
    x0 = np.ascontiguousarray(q.T)  # T x d, orthonormal rows

    gaps = [a.gap, "center" if a.gap == "off" else "off"]  # network, counterpart
    xs = [x0, x0]
    curves = [[stable_rank(x0)], [stable_rank(x0)]]
    shown = None
    scale = 1.0 / math.sqrt(d)
    for layer in range(1, L + 1):
        if a.attention == "softmax":
            wq = rng.standard_normal((d, d)) * a.sigma_qk
            wk = rng.standard_normal((d, d)) * a.sigma_qk
        else:
            g_markov = rng.standard_normal((T, T)) * a.sigma_qk ** 2
        wv = rng.standard_normal((d, d))
        for n in range(2):
            x = xs[n]
            if x is None:
                curves[n].append((None, None))
                continue
            if a.attention == "softmax":
                attn = softmax_rows((x @ wq) @ (x @ wk).T * scale)
            else:
                attn = softmax_rows(g_markov.copy())
            if gaps[n] == "center":
                attn -= 1.0 / T
            y = attn @ (x @ wv)
            if not np.all(np.isfinite(y)):
                y = None
            xs[n] = y
            curves[n].append(stable_rank(y) if y is not None else (None, None))
            if n == 0 and layer == a.layer:
                shown = attn
    out = {"stable_rank": [c[0] for c in curves[0]],
           "stable_rank_minus_one": [c[1] for c in curves[0]],
           "counterpart_gap": gaps[1],
           "counterpart_stable_rank": [c[0] for c in curves[1]],
           "counterpart_stable_rank_minus_one": [c[1] for c in curves[1]]}
    if not a.no_spectra:
        lam = np.linalg.eigvals(shown)
        out["eigenvalue_moduli"] = sorted(np.abs(lam).tolist(), reverse=True)
        out["singular_values"] = np.linalg.svd(shown, compute_uv=False).tolist()
    return out


def main(argv):
    a = parse(argv)
    start = time.perf_counter()
    out = run(a)
    elapsed = time.perf_counter() - start
    doc = {"numpy_ref": np.__version__,
           "config": {"T": a.tokens, "d": a.width, "depth": a.depth, "sigma_qk": a.sigma_qk,
                      "attention": a.attention, "mask": "full", "gap": a.gap,
                      "layernorm": "none", "skip": "none", "seed": a.seed, "layer": a.layer},
           "rng": "numpy PCG64 default_rng(seed)",
           "sigma": math.sqrt(math.expm1(a.sigma_qk ** 4)),
           **out,
           "elapsed": elapsed,
           "openblas": openblas_kernel()}
    json.dump(doc, sys.stdout, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
