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

--same-as-batch (softmax only, gap off or center; the fair reference of bench/README.md, "The
numpy reference"): every per-layer number `attnscope --batch` prints for that configuration,
both networks, from docs/model.md's formulas (§2, §3), with attnscope's key names:
stable_rank (and _minus_one, _mean, _m2), token_similarity, gradient_norm (the frozen-attention
product ‖P1‖_F²·‖P2‖_F², the W^V suffix products shared by the networks), log10_gradient_norm,
log10_norm, attention_entropy {mean, min, max, normalised_mean, and their _head_average},
max_attention_mean (and _head_average), attention_entropy_zhai_bound,
attention_phase_critical_beta, centred_stable_rank, energy_off_top, relative_spread,
token_cosine_mean, token_rms (each also counterpart_…), the shown layer's eigenvalues,
singular_values, outlier, readouts, logit_std and shown_attention_entropy, and the first-layer
theory (sigma, attention_entropy_theory, attention_phase).  Each token matrix's numbers come
from one Gram matrix of X/‖X‖_F and its eigenvalues (np.linalg.eigvalsh), the centred ones from
the Gram matrix of the centred tokens; sr − 1 below 1e-18, where the Gram matrix's eigenvalues no
longer resolve it, from the singular values of X (docs/model.md §2).  Nulls by §2's rules:
token_similarity and centred_stable_rank where μ(X)/‖X‖_F < 1e-12 (tokens equal within
round-off), every number of a network from the layer it overflows or vanishes at, and the
round-off rules of §2's "Round-off from a layer on" (round_off), among them sr − 1 and
energy_off_top where the latter is below 1e-24 (X of one direction within round-off), and the logits'
rounding bound attention_logit_rounding (logit_rounding), the rows' own bounds from it
(rows_rounding; the mean entropy's is attention_entropy_rounding) and each row statistic null
where its bound reaches half its value (1e-6 near 0).  ‖W^Q W^Kᵀ‖₂ and ‖X‖₂ are
exact (eigenvalues of Gram matrices), where attnscope above T·d·min(T, d) = 64³ uses proved
upper bounds within ~1e-8 of them (docs/model.md §3).
Not reproduced: stable_rank_std (null for one seed), seeds_done and the other counts, the
`theory` object's laws and curves (strings or null for softmax), product_column_mass (null
unless --attention-map product), the conditioning (not asked), and attnscope's
warnings and notes (text, not numbers).
--write-checkpoint DIR writes X0 and the weights as DIR/model.safetensors (X0's rows as the
embedding table model.embed_tokens.weight, W^Q, W^K, W^V as nn.Linear's (out, in), so their
transposes) and DIR/ids.txt (0 … T−1), which `attnscope --batch --weights DIR --token-ids
DIR/ids.txt` reads (tests/cli/numpy-ref.sh).
"""
import argparse
import ctypes
import json
import math
import os
import sys
import time

import numpy as np

# The safetensors writer the tests' files share (scripts/safetensors_file.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from safetensors_file import PYTORCH, write  # noqa: E402

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
    p.add_argument("--same-as-batch", action="store_true",
                   help="every per-layer number --batch prints (softmax), not only the stable ranks")
    p.add_argument("--write-checkpoint", metavar="DIR",
                   help="with --same-as-batch: X0 and the weights as DIR/model.safetensors "
                        "and DIR/ids.txt, for attnscope --weights DIR --token-ids DIR/ids.txt")
    a = p.parse_args(argv)
    if a.same_as_batch and a.attention != "softmax":
        p.error(f"--same-as-batch: -a/--attention {a.attention}: accepted softmax only")
    if a.same_as_batch and a.no_spectra:
        p.error("--same-as-batch computes the shown layer's spectra: --no-spectra not accepted")
    if a.write_checkpoint and not a.same_as_batch:
        p.error("--write-checkpoint: accepted only with --same-as-batch")
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


def singular_value_rank(x):
    """sr − 1 = Σ_{i≥2}(s_i/s1)⁴ and the energy off the top Σ_{i≥2} s_i²/Σ s_i², each summed
    smallest first, from the singular values of X (docs/model.md §2); None where they are not
    finite or X is zero."""
    s = np.linalg.svd(x, compute_uv=False)
    if not np.all(np.isfinite(s)) or s[0] == 0:
        return None
    rest = float(np.sum(((s[1:] / s[0]) ** 4)[::-1]))
    energy = float(np.sum((s[1:] ** 2)[::-1]) / np.sum(s ** 2))
    return rest, energy


def stable_ranks_only(x):
    """The default's measure of a token matrix: sr(X Xᵀ) and sr − 1 from X's singular values."""
    rank = singular_value_rank(x)
    if rank is None:
        return None
    return {"stable_rank": 1.0 + rank[0], "stable_rank_minus_one": rank[0]}


def orthonormal_input(rng, T, d):
    """X0 (T x d, orthonormal rows): the Q of a d x T Gaussian's QR, signs by diag(R)."""
    g = rng.standard_normal((d, T))
    q, r = np.linalg.qr(g)  # reduced: q is d x T
    q *= np.sign(np.diag(r))
    return np.ascontiguousarray(q.T)


# docs/model.md §2's thresholds: sr − 1 below GRAM_FLOOR comes from X's singular values (the
# Gram matrix's eigenvalues carry an absolute error ~eps·λ1); tokens whose spread is below
# EQUAL_TOKENS of their norm are equal within round-off (no centred stable rank, and no token
# similarity: μ(X_ℓ)/μ(X0) would measure only the growth of ‖X‖); the readouts
# read |1 − |λ2|| below READOUT_ROUNDOFF as 0 and s2 below it (relative to s1) as round-off.
GRAM_FLOOR = 1e-18
EQUAL_TOKENS = 1e-12
READOUT_ROUNDOFF = 1e-12


def top_rest(lam):
    """Σ_{i≥2} (λ_i/λ1)² of ascending eigenvalues, smallest first (no cancellation)."""
    return float(np.sum((lam[:-1] / lam[-1]) ** 2))


def token_measures(x, mu0):
    """docs/model.md §2's numbers of one token matrix X (T x d, T ≤ d), from the Gram matrix
    of U = X/‖X‖_F; mu0 = μ(X0) (None: X is X0).  None where X is not finite or zero."""
    nu = float(np.linalg.norm(x))
    if not math.isfinite(nu) or nu == 0:
        return None
    u = x / nu
    gram = u @ u.T
    lam = np.linalg.eigvalsh(gram)
    rest, energy = top_rest(lam), float(np.sum(lam[:-1]) / np.sum(lam))
    if rest < GRAM_FLOOR:  # below the Gram matrix's resolution: X itself
        rest, energy = singular_value_rank(u)
    T = x.shape[0]
    centred = u - u.mean(axis=0)
    spread = float(np.linalg.norm(centred))  # μ(X)/‖X‖_F
    mu = spread * nu
    centred_sr = None
    if spread >= EQUAL_TOKENS:
        centred_sr = 1.0 + top_rest(np.linalg.eigvalsh(centred @ centred.T))
    # cos(x_i, x_j) over the pairs of nonzero rows: (‖Σ c_i‖² − Σ‖c_i‖²)/(n(n − 1)).
    diag = np.diag(gram)
    inv = np.divide(1.0, np.sqrt(diag), out=np.zeros(T), where=diag > 0)
    n = int(np.count_nonzero(diag > 0))
    cosine = None
    if n >= 2:
        cosine = float((inv @ gram @ inv - np.sum(inv * inv * diag)) / (n * (n - 1)))
    return {"stable_rank": 1.0 + rest, "stable_rank_minus_one": rest,
            "token_similarity": None if spread < EQUAL_TOKENS else 1.0 if mu0 is None else mu / mu0,
            "log10_norm": math.log10(nu),
            "centred_stable_rank": centred_sr, "energy_off_top": energy,
            "relative_spread": spread, "token_cosine_mean": cosine,
            "token_rms": nu / math.sqrt(T),
            # for the next layer's bounds: ‖X‖₂², q (mean squared norm), q − p (§3)
            "norm2_squared": float(lam[-1]) * nu * nu, "mu": mu, "q": nu * nu / T,
            "q_minus_p": mu * mu / (T - 1)}


def row_entropies(a):
    """H_i = −Σ_j A_ij ln A_ij in nats, 0 ln 0 = 0."""
    logs = np.log(a, out=np.zeros_like(a), where=a > 0)
    return -np.einsum("ij,ij->i", a, logs)


def zhai_row_bound(n, sigma):
    """Zhai et al.'s least row entropy for logit norms ≤ sigma over n keys (docs/model.md §3)."""
    others = n - 1.0
    b = math.exp(-sigma * math.sqrt(n / others))
    return math.log1p(others * b) + sigma * math.sqrt(n * others) * b / (1 + others * b)


# docs/model.md §2, "The rows' own bound": a row statistic is shown where its bound is below
# half its value, or below this where the value is near 0.
RESOLUTION_FLOOR = 1e-6
U = 2.0 ** -53


def rows_rounding(a, h, delta):
    """docs/model.md §2's bounds, row by row, on how far the exact rows' entropies and largest
    weights lie from those of a (T rows of n = T keys, full mask), whose logits are within
    delta of the exact: (e^{2δ'} − 1)·((H + ln p_max) + δ'·min(1, 2(1 − p_max))) + slack and
    (e^{2δ'} − 1)·min(p_max, 1 − p_max) + slack, δ' = δ + 760u; their layer statistics'
    bounds (the means', the least entropy's, the largest's)."""
    n = a.shape[1]
    top = a.max(axis=1)
    d = delta + 760 * U
    gamma = (2 * n + 8) * U / (1 - (2 * n + 8) * U)
    slack = 64.0 * (n + 4) * gamma * (h + 1)
    grow = math.expm1(2 * d) if d < 350 else math.inf
    spread = np.maximum(0.0, h + np.log(top)) + slack
    rows = (grow * (spread + d * np.minimum(1.0, 2 * (1 - top) + slack)) + slack) * (1 + 16 * 2 * U)
    tops = (grow * (np.minimum(top, 1 - top) + 64.0 * (n + 4) * gamma) + 64.0 * (n + 4) * gamma) \
        * (1 + 16 * 2 * U)
    low, high = int(np.argmin(h)), int(np.argmax(h))
    return {"mean": float(rows.mean()),
            "min": max(rows[low], float(np.max(rows - (h - h[low])))) + 8 * U * h[low],
            "max": max(rows[high], float(np.max(rows - (h[high] - h)))) + 8 * U * h[high],
            "normalised_mean": float(rows.mean() / math.log(n)),
            "max_attention_mean": float(tops.mean())}


def resolved(value, bound):
    """Whether a statistic is shown: its bound below half of it, or below the floor."""
    return not bound >= max(abs(value) / 2, RESOLUTION_FLOOR)


def logit_rounding(x, wq, wk, scale):
    """docs/model.md §2's bound on the rounding of each logit of the layer whose input is x:
    every logit is formed by sums of d (the two projections, or X·M and its product with
    Xᵀ) and of d_h = d (the query-key product, or M) products, then scaled, so its error is
    within γ_{2d + d_h + 12}·|scale|·‖x_i‖‖W^Q‖_F‖W^K‖_F‖x_j‖ (the 12 also covers RoPE's
    rotations, which this reference does not run)."""
    d = x.shape[1]
    n = 2 * d + d + 12
    gamma = n * 2.0 ** -53 / (1 - n * 2.0 ** -53)
    largest = float(np.max(np.einsum("ij,ij->i", x, x)))
    return gamma * scale * float(np.linalg.norm(wq)) * float(np.linalg.norm(wk)) * largest


def attention_numbers(a_built, m_norm, before):
    """A layer's attention numbers (§2, §3) from A as built and its input's measures."""
    T = a_built.shape[0]
    h = row_entropies(a_built)
    sigma = m_norm * before["norm2_squared"]
    beta_c = None
    if before["q_minus_p"] > 0:
        beta_c = math.sqrt(2.0 / (before["q"] * before["q_minus_p"]))
    return {"mean": float(h.mean()), "min": float(h.min()), "max": float(h.max()),
            "normalised_mean": float(np.mean(h / math.log(T))),
            "max_attention_mean": float(a_built.max(axis=1).mean()),
            "zhai_bound": zhai_row_bound(T, sigma), "critical_beta": beta_c, "rows": h}


def gradient_norms(products, x0, values):
    """‖∂X_L/∂W^V_ℓ‖_F² = ‖P1‖_F²·‖P2‖_F² for ℓ = 1..L (docs/model.md §2), for each network's
    product A_L⋯A_1 (None: the network died): P1 = A_L⋯A_1 X0 W_1⋯W_{ℓ−1},
    P2 = W_{ℓ+1}⋯W_L (I at ℓ = L), whose norms the networks share."""
    L, d = len(values), values[0].shape[0]
    suffix_norms = [float(d)] * L
    suffix = None
    for layer in range(L - 2, -1, -1):  # 0-based: P2 of layer+1 is values[layer+1:]
        suffix = values[layer + 1] if suffix is None else values[layer + 1] @ suffix
        suffix_norms[layer] = float(np.vdot(suffix, suffix))
    out = []
    for product in products:
        if product is None:
            out.append([None] * L)
            continue
        p1 = product @ x0
        norms = []
        for layer in range(L):
            norms.append(float(np.vdot(p1, p1)) * suffix_norms[layer])
            if layer + 1 < L:
                p1 = p1 @ values[layer]
        out.append(norms)
    return out


def write_checkpoint(directory, x0, weights):
    """X0 as the embedding table, ids 0 … T−1, the layers' W^Q, W^K, W^V (nn.Linear's (out, in):
    transposed), F64, as docs/weights.md names them."""
    os.makedirs(directory, exist_ok=True)
    tensors = [("model.embed_tokens.weight", x0)]
    for layer, (wq, wk, wv) in enumerate(weights):
        for name, w in (("q_proj", wq), ("k_proj", wk), ("v_proj", wv)):
            tensors.append((f"model.layers.{layer}.self_attn.{name}.weight", w.T))
    write(os.path.join(directory, "model.safetensors"),
          [(name, "F64", list(array.shape), np.ascontiguousarray(array, dtype="<f8").tobytes())
           for name, array in tensors], PYTORCH)
    with open(os.path.join(directory, "ids.txt"), "w") as f:
        f.write("".join(f"{i}\n" for i in range(x0.shape[0])))


def shown_readouts(applied, gap_off, stable_rank):
    """The shown matrix's spectra and readouts (docs/model.md §2)."""
    lam = np.linalg.eigvals(applied)
    lam = lam[np.argsort(-np.abs(lam), kind="stable")]
    sv = np.linalg.svd(applied, compute_uv=False)
    moduli = np.abs(lam)
    gap = 1.0 - float(moduli[1])
    return {"eigenvalues": [[float(z.real), float(z.imag)] for z in lam],
            "singular_values": sv.tolist(),
            "outlier": 0 if moduli[0] >= 2 * moduli[1] else None,
            "readouts": {
                "one_minus_abs_lambda2": (0.0 if abs(gap) < READOUT_ROUNDOFF else gap)
                if gap_off else None,
                "s1_over_s2": float(sv[0] / sv[1]) if sv[1] > READOUT_ROUNDOFF * sv[0] else None,
                "count_abs_lambda_above_half": int(np.sum(moduli > 0.5)) if gap_off else None,
                "stable_rank_shown_layer": stable_rank}}


def first_layer_theory(a, critical_betas):
    """σ, the entropy prediction and Giorlandino & Goldt's β for layer 1 (docs/model.md §3):
    logits of std s = σ_qk² at the 1/√d scale on orthonormal rows."""
    T, s = a.tokens, a.sigma_qk ** 2
    critical = math.sqrt(2 * math.log(T))
    beta = s / math.sqrt(math.log(T))
    sides = [[None if b is None else "entropy-collapse" if beta >= b else "rank-collapse"
              for b in betas] for betas in critical_betas]
    return {"attention_entropy_theory": {"layer": 1, "logit_std": s, "critical_logit_std": critical,
                                         "mean": math.log(T) - s * s / 2 if s < critical else None},
            "attention_phase": {"beta": beta, "side": sides[0], "counterpart_side": sides[1]}}


def draw_layer(rng, a):
    """One layer's weights in the order both modes draw them: (W^Q, W^K, W^V) for softmax,
    (the Markov Gaussians, W^V) for markov."""
    T, d = a.tokens, a.width
    if a.attention == "markov":
        return rng.standard_normal((T, T)) * a.sigma_qk ** 2, rng.standard_normal((d, d))
    wq = rng.standard_normal((d, d)) * a.sigma_qk
    wk = rng.standard_normal((d, d)) * a.sigma_qk
    return wq, wk, rng.standard_normal((d, d))


def layer_logits(a, weights):
    """X ↦ the layer's logits, and ‖M‖₂ (None but with --same-as-batch).  --same-as-batch
    forms M = W^Q W^Kᵀ/√d once for both networks (logits X M Xᵀ; Zhai's bound needs ‖M‖₂
    anyway); the default keeps (X W^Q)(X W^K)ᵀ/√d per network, as the old comparison timed it."""
    if a.attention == "markov":
        return (lambda x: weights[0]), None
    wq, wk, _ = weights
    scale = 1.0 / math.sqrt(a.width)
    if not a.same_as_batch:
        return (lambda x: (x @ wq) @ (x @ wk).T * scale), None
    m = (wq @ wk.T) * scale
    return (lambda x: x @ m @ x.T), math.sqrt(float(np.linalg.eigvalsh(m.T @ m)[-1]))


def run(a):
    """Both networks through the layers, one loop for both modes.  Per network and layer the
    tokens' measures (the default: the stable ranks alone; --same-as-batch: token_measures),
    with --same-as-batch also the attention's numbers and A_ℓ⋯A_1 for the gradients; a
    network that overflows or vanishes is null from that layer on (docs/model.md §2)."""
    full, T, L = a.same_as_batch, a.tokens, a.depth
    rng = np.random.default_rng(a.seed)
    x0 = orthonormal_input(rng, T, a.width)
    gaps = [a.gap, "center" if a.gap == "off" else "off"]  # network, counterpart
    measure = token_measures if full else (lambda x, mu0: stable_ranks_only(x))
    first = measure(x0, None)
    mu0 = first["mu"] if full else None
    # the default measured X0 once per network: kept, as its timing is the old reference's
    measures = [[first], [first if full else measure(x0, None)]]  # per layer 0..L
    layers = [[None], [None]]  # attention numbers per layer 1..L (--same-as-batch)
    products = [None, None]  # A_ℓ⋯A_1 as applied (--same-as-batch)
    xs, values, drawn, shown = [x0, x0], [], [], {}
    for layer in range(1, L + 1):
        weights = draw_layer(rng, a)
        wv = weights[-1]
        if full:
            values.append(wv)
        if a.write_checkpoint:
            drawn.append(weights)
        logits_of, m_norm = layer_logits(a, weights)
        for n in range(2):
            x = xs[n]
            if x is None:
                measures[n].append(None)
                layers[n].append(None)
                continue
            logits = logits_of(x)
            is_shown = n == 0 and layer == a.layer
            if is_shown and full:
                shown["logit_std"] = float(np.std(logits))
            built = softmax_rows(logits)
            numbers = attention_numbers(built, m_norm, measures[n][-1]) if full else None
            if full:
                wq, wk, _ = weights
                numbers["logit_rounding"] = logit_rounding(x, wq, wk, 1.0 / math.sqrt(a.width))
                bounds = rows_rounding(built, numbers["rows"], numbers["logit_rounding"])
                # an infinite bound prints as null, as attnscope's JSON does
                numbers["entropy_rounding"] = bounds["mean"] if math.isfinite(bounds["mean"]) else None
                for key, bound in bounds.items():
                    if not resolved(numbers[key], bound):
                        numbers[key] = None
                if numbers["min"] is None:  # its bound is every row's largest
                    numbers["rows"] = np.full(len(numbers["rows"]), None)
            applied = built - 1.0 / T if gaps[n] == "center" else built
            if full:
                products[n] = applied if layer == 1 else applied @ products[n]
            y = applied @ (x @ wv)
            after = measure(y, mu0) if np.all(np.isfinite(y)) else None
            measures[n].append(after)
            layers[n].append(None if after is None else numbers)
            xs[n] = None if after is None else y
            if after is None:
                products[n] = None
            if is_shown:
                shown["applied"] = applied
                if full:
                    shown["rows"] = numbers["rows"].tolist()
    if not full:
        return assemble_stable_ranks(a, gaps, measures, shown)
    grads = gradient_norms(products, x0, values)
    if a.write_checkpoint:
        write_checkpoint(a.write_checkpoint, x0, drawn)
    return assemble(a, gaps, measures, layers, grads, shown)


def assemble_stable_ranks(a, gaps, measures, shown):
    """The default's fields: both networks' stable ranks, the shown matrix's spectra."""
    def series(n, key):
        return [None if m is None else m[key] for m in measures[n]]
    out = {"stable_rank": series(0, "stable_rank"),
           "stable_rank_minus_one": series(0, "stable_rank_minus_one"),
           "counterpart_gap": gaps[1],
           "counterpart_stable_rank": series(1, "stable_rank"),
           "counterpart_stable_rank_minus_one": series(1, "stable_rank_minus_one")}
    if not a.no_spectra and "applied" in shown:
        lam = np.linalg.eigvals(shown["applied"])
        out["eigenvalue_moduli"] = sorted(np.abs(lam).tolist(), reverse=True)
        out["singular_values"] = np.linalg.svd(shown["applied"], compute_uv=False).tolist()
    return out


def round_off(out, prefix, gap):
    """docs/model.md §2, "Round-off from a layer on", for softmax, the full mask and no skip:
    from the first layer ℓ* whose spread is below EQUAL_TOKENS, what reads the tokens'
    differences (sr − 1 among them, below 1e-48 there), and
    from ℓ* + 1 the attention rows' numbers and β_c; with the gap removed (center: M·1 = 0),
    every number from ℓ* + 1 on and the gradients at every layer."""
    def null(keys, first):
        for key in keys:
            series = out[prefix + key]
            for layer in range(first, len(series)):
                series[layer] = None
    # X of one direction within round-off (energy off the top direction below EQUAL_TOKENS²,
    # tokens apart or not): sr − 1 < 1e-48 and the energy are its rounding
    for layer, energy in enumerate(list(out[prefix + "energy_off_top"])):
        if energy is not None and energy < EQUAL_TOKENS ** 2:
            out[prefix + "stable_rank_minus_one"][layer] = None
            out[prefix + "energy_off_top"][layer] = None
    spreads = out[prefix + "relative_spread"]
    equal = next((l for l, s in enumerate(spreads) if s is not None and s < EQUAL_TOKENS), None)
    if equal is None:
        return
    null(("token_similarity", "centred_stable_rank", "energy_off_top", "relative_spread",
          "stable_rank_minus_one"), equal)
    entropy = out[prefix + "attention_entropy"]
    rows = [entropy[key] for key in entropy]
    rows += [out[prefix + "max_attention_mean"], out[prefix + "attention_phase_critical_beta"],
             out[prefix + "attention_entropy_rounding"]]
    for series in rows:
        for layer in range(equal + 1, len(series)):
            series[layer] = None
    if gap == "off" or equal + 1 >= len(spreads):
        return
    null(("stable_rank", "log10_norm", "token_cosine_mean", "token_rms", "stable_rank_mean",
          "stable_rank_m2", "attention_entropy_zhai_bound", "attention_logit_rounding"), equal + 1)
    null(("gradient_norm", "log10_gradient_norm"), 0)


def assemble(a, gaps, measures, layers, grads, shown):
    """The JSON fields, with attnscope's key names, from the per-network lists."""
    out = {"counterpart_gap": gaps[1], "logit_std": shown.get("logit_std")}
    for n, prefix in enumerate(("", "counterpart_")):
        def series(key, source=measures[n]):
            return [None if m is None else m[key] for m in source]
        for key in ("stable_rank", "stable_rank_minus_one", "token_similarity", "log10_norm",
                    "centred_stable_rank", "energy_off_top", "relative_spread",
                    "token_cosine_mean", "token_rms"):
            out[prefix + key] = series(key)
        out[prefix + "stable_rank_mean"] = series("stable_rank")
        out[prefix + "stable_rank_m2"] = [None if m is None else 0.0 for m in measures[n]]
        out[prefix + "gradient_norm"] = grads[n]
        out[prefix + "log10_gradient_norm"] = [None if g is None or g <= 0 else math.log10(g)
                                              for g in grads[n]]
        entropy = {key: series(key, layers[n]) for key in ("mean", "min", "max", "normalised_mean")}
        entropy.update({key + "_head_average": entropy[key] for key in list(entropy)})
        out[prefix + "attention_entropy"] = entropy
        out[prefix + "max_attention_mean"] = series("max_attention_mean", layers[n])
        out[prefix + "max_attention_mean_head_average"] = out[prefix + "max_attention_mean"]
        out[prefix + "attention_entropy_zhai_bound"] = series("zhai_bound", layers[n])
        out[prefix + "attention_phase_critical_beta"] = series("critical_beta", layers[n])
        out[prefix + "attention_logit_rounding"] = series("logit_rounding", layers[n])
        out[prefix + "attention_entropy_rounding"] = series("entropy_rounding", layers[n])
    for prefix, gap in zip(("", "counterpart_"), gaps):
        round_off(out, prefix, gap)
    out.update(first_layer_theory(a, [out["attention_phase_critical_beta"],
                                      out["counterpart_attention_phase_critical_beta"]]))
    if "applied" in shown:
        out["shown_attention_entropy"] = {"layer": a.layer, "head": 1, "rows": shown["rows"]}
        out.update(shown_readouts(shown["applied"], a.gap == "off", out["stable_rank"][a.layer]))
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
