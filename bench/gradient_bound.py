#!/usr/bin/python3
"""‖P1‖_F² as ⟨F_LᵀF_L, Q_ℓQ_ℓᵀ⟩ and the proved bound on its rounding (issue 25, bench/README.md
"The gradients' products"), on numpy_ref.py's model (its --same-as-batch draws; softmax, the
network with gap off and its centred counterpart):

    /usr/bin/python3 bench/gradient_bound.py -T 1024 -L 8 --seeds 1 2 [--per-layer]

F_L = A_L⋯A_1 X0 and Q_ℓ = W_1⋯W_{ℓ−1} at unit Frobenius norm, C = F_LᵀF_L, G_ℓ = Q_ℓQ_ℓᵀ,
v̂ = ⟨C, G_ℓ⟩ against the chain's ‖F_L Q_ℓ‖_F² (float64, the reference), for ℓ = 2..L.  The
bound, to first order: |v̂ − v| ≤ γ_T·sᵀ|G|s + γ_d·tᵀ|C|t + γ_2d·Σ|C_ij G_ij| + γ_Tγ_d(sᵀt)²
with s_i = √C_ii, t_i = √G_ii (times 1.01 for the first-order factors); beside it the
Cauchy–Schwarz bound (γ_T + γ_d + γ_2d)·(sᵀt)².  A benchmark's analysis, not a test."""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_ref  # noqa: E402

UNIT = 2.0 ** -53


def gamma(n):
    return n * UNIT / (1 - n * UNIT)


def frozen_products(T, L, seed):
    """Both networks' F_L (unit norm) and the values W_1..W_L, numpy_ref's draws in its order."""
    a = numpy_ref.parse(["-T", str(T), "-d", str(T), "-L", str(L), "--seed", str(seed),
                         "--same-as-batch"])
    rng = np.random.default_rng(seed)
    x0 = numpy_ref.orthonormal_input(rng, T, T)
    xs, frozen, values = [x0, x0], [x0.copy(), x0.copy()], []
    for _ in range(L):
        wq, wk, wv = numpy_ref.draw_layer(rng, a)
        values.append(wv)
        m = (wq @ wk.T) / math.sqrt(T)
        for n in range(2):
            attention = numpy_ref.softmax_rows(xs[n] @ m @ xs[n].T)
            if n == 1:
                attention = attention - 1.0 / T
            xs[n] = attention @ (xs[n] @ wv)
            xs[n] /= np.linalg.norm(xs[n])  # the scale is apart; the direction is the network's
            frozen[n] = attention @ frozen[n]
            frozen[n] /= np.linalg.norm(frozen[n])
    return frozen, values


def bounds(T, L, seed):
    """(ℓ, network, true relative difference, first-order bound, Cauchy–Schwarz bound)."""
    frozen, values = frozen_products(T, L, seed)
    d = T
    q = values[0] / np.linalg.norm(values[0])
    rows = []
    for layer in range(2, L + 1):
        g = q @ q.T
        t = np.sqrt(np.diag(g))
        for n in range(2):
            c = frozen[n].T @ frozen[n]
            s = np.sqrt(np.diag(c))
            v = float(np.sum(c * g))
            p1 = frozen[n] @ q
            reference = float(np.vdot(p1, p1))
            st2 = float(s @ t) ** 2
            first = (gamma(T) * float(s @ np.abs(g) @ s) + gamma(d) * float(t @ np.abs(c) @ t)
                     + gamma(2 * d) * float(np.sum(np.abs(c * g))) + gamma(T) * gamma(d) * st2)
            schwarz = (gamma(T) + gamma(d) + gamma(2 * d)) * st2
            rows.append((layer, n, abs(v - reference) / reference, 1.01 * first / v,
                         1.01 * schwarz / v))
        if layer < L:
            q = q @ values[layer - 1]
            q /= np.linalg.norm(q)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-T", type=int, default=256)
    p.add_argument("-L", type=int, default=8)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--per-layer", action="store_true")
    a = p.parse_args()
    for seed in a.seeds:
        rows = bounds(a.T, a.L, seed)
        for n, name in enumerate(("network", "counterpart")):
            mine = [r for r in rows if r[1] == n]
            print(f"T = d = {a.T} seed {seed} {name}: true {max(r[2] for r in mine):.2e}, "
                  f"bound {max(r[3] for r in mine):.2e}, Cauchy-Schwarz "
                  f"{max(r[4] for r in mine):.2e} (largest over layers 2..{a.L})")
            if a.per_layer:
                for r in mine:
                    print(f"  layer {r[0]}: true {r[2]:.2e}, bound {r[3]:.2e}, "
                          f"Cauchy-Schwarz {r[4]:.2e}")


if __name__ == "__main__":
    main()
