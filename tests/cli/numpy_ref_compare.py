#!/usr/bin/python3
"""bench/numpy_ref.py --same-as-batch against attnscope's --batch on numpy's own X0 and weights.

    numpy_ref_compare.py NUMPY.json CHECKPOINT.json DRAWN.json CHECKPOINT_DIR [--perturb PATH | --drop PATH]

NUMPY.json: numpy_ref's document (it wrote the checkpoint); CHECKPOINT.json: attnscope --batch
--weights on that checkpoint (--token-ids 0 … T−1: X0's rows); DRAWN.json: attnscope --batch
with the same flags and its own draws, for what a checkpoint withdraws (docs/model.md §3, "What
the block's settings do to the theory").  First numpy's document must have exactly the
documented fields (DOCUMENTED: 51 top-level keys with their sub-keys, each list of L + 1, L or
T entries), so that a field numpy stopped printing fails; then every number in it is compared:
- against the checkpoint run, to RTOL relative (each number's own scale; absolute floors below);
- the first-layer theory (sigma, attention_entropy_theory, attention_phase.beta), which depends
  on the configuration alone, against the drawn run;
- Giorlandino & Goldt's β_c and sides, null under a checkpoint: against
  √(2/(q(q − p))) of the checkpoint run's token_rms and relative_spread of layer ℓ − 1
  (q = rms², q − p = μ²/(T − 1) = rms²·spread²·T/(T − 1)), whose formula the drawn run's own
  β_c must satisfy too.
- docs/model.md §2's null rule in each document alone: token_similarity and
  centred_stable_rank null exactly where its own relative_spread is below 1e-12.
Deeper networks (L = 8) merge their tokens: there a number is as undetermined as one layer's
rounding leaves it, and the Rounding class derives that floor for relative_spread,
token_similarity, β_c and the attention's numbers from the checkpoint's weight norms and the
checkpoint run's token_rms and relative_spread (its docstring).
Exit 0 when all agree (prints the largest difference as a fraction of its tolerance), 1 with the fields that do not,
2 on bad input.  --perturb PATH multiplies numpy's number at PATH (e.g. token_rms[2]) by
1 + 100·RTOL first, --drop PATH removes that field (e.g. token_similarity) or entry: the
comparison must then fail (the test's proof that it can).

RTOL: both programs compute the same formulas in double with other summation orders and
LAPACK drivers.  One product of length d ≤ 48 errs by γ_d ≈ 48u ≈ 5e-15 relative; a softmax
layer turns a relative error δ of its input into an absolute error ≈ 2·max|S|·δ of its logits,
i.e. a relative error of A's entries, and the least entropy of a nearly one-hot row (≈ 4e-6 at
layer 3) is as accurate as its small entries.  At these sizes (σ_qk = 1, L = 3, max|S| ≲ 1e3 at
layer 3) that is ≲ 1e-10 (measured: 6e-11, everything else ≤ 1e-12); RTOL = 1e-9 keeps a
factor 10 and is 1e6 below a wrong formula's error.  Absolute floors where both programs print
rounding of a number on a larger scale: 2·T·eps (eps = 2⁻⁵²) for token_cosine_mean (0 for
orthonormal X0, on a scale of 1), energy_off_top (a fraction of trace 1, summed from the small
eigenvalues or as trace − θ: docs/model.md §2, "absolute rounding ~T·eps") and the singular
values (each within ~T·u·s1, s1 ≈ 1: the centred matrix's exact 0 prints as 1e-17); the
eigenvalues within 1e-9 of the unit outlier's scale.  sr − 1 = Σ_{i≥2}(λ_i/λ1)² from the
eigenvalues of the Gram matrix of U = X/‖X‖_F (trace 1), each within ~d·u of the exact (Weyl):
by Cauchy–Schwarz it may err by 2·√(T·(sr − 1))·d·eps absolutely, which at sr − 1 = 6e-15
(T = d = 16, seed 2, layer 3) is 1e-7 of it (measured: 5e-10).  Zhai et al.'s bound
≈ exp(−σ√(n/(n−1))) turns σ's relative error into ln(bound)'s absolute one: compared as
|ln a − ln b| ≤ RTOL·|ln a| (both 0 below the double range).
"""
import json
import math
import os
import struct
import sys

import safetensors_tool

RTOL = 1e-9
EPS = 2.0 ** -52
SPREAD_RESOLUTION = 1e-12  # docs/model.md §2: μ(X)/‖X‖_F below it is round-off
ATTENTION = ("attention_entropy", "max_attention_mean", "max_attention_mean_head_average")
ROUNDING_ON_UNIT_SCALE = ("token_cosine_mean", "counterpart_token_cosine_mean", "energy_off_top",
                          "counterpart_energy_off_top", "singular_values")
META = {"numpy_ref", "config", "rng", "elapsed", "openblas", "counterpart_gap"}

# The fields numpy_ref --same-as-batch documents (its docstring; bench/README.md, "The numpy
# reference"), by shape: LAYERS a list indexed by ℓ = 0..L, GRADIENT_LAYERS by ℓ = 1..L, ROWS one
# entry per token, NUMBER one value (or null), a dict its keys' shapes.  A document of another
# shape is refused before anything is compared, so a field numpy stopped printing cannot pass.
LAYERS, GRADIENT_LAYERS, ROWS, NUMBER = "layers", "gradient layers", "rows", "number"
PER_NETWORK = {
    **{key: LAYERS for key in ("stable_rank", "stable_rank_minus_one", "stable_rank_mean",
                               "stable_rank_m2", "token_similarity", "log10_norm",
                               "centred_stable_rank", "energy_off_top", "relative_spread",
                               "token_cosine_mean", "token_rms", "max_attention_mean",
                               "max_attention_mean_head_average", "attention_entropy_zhai_bound",
                               "attention_phase_critical_beta", "attention_logit_rounding",
                               "attention_entropy_rounding")},
    "gradient_norm": GRADIENT_LAYERS, "log10_gradient_norm": GRADIENT_LAYERS,
    "attention_entropy": {key + average: LAYERS for key in ("mean", "min", "max", "normalised_mean")
                          for average in ("", "_head_average")}}
DOCUMENTED = {
    **{key: NUMBER for key in META}, "sigma": NUMBER, "logit_std": NUMBER, "outlier": NUMBER,
    **PER_NETWORK, **{"counterpart_" + key: shape for key, shape in PER_NETWORK.items()},
    "attention_entropy_theory": {"layer": NUMBER, "logit_std": NUMBER,
                                 "critical_logit_std": NUMBER, "mean": NUMBER},
    "attention_phase": {"beta": NUMBER, "side": LAYERS, "counterpart_side": LAYERS},
    "shown_attention_entropy": {"layer": NUMBER, "head": NUMBER, "rows": ROWS},
    "eigenvalues": ROWS, "singular_values": ROWS,
    "readouts": {key: NUMBER for key in ("one_minus_abs_lambda2", "s1_over_s2",
                                         "count_abs_lambda_above_half", "stable_rank_shown_layer")}}
DOCUMENTED_COUNT = 55  # top-level keys, META included
WITHDRAWN = {"sigma", "attention_entropy_theory", "attention_phase",
             "attention_phase_critical_beta", "counterpart_attention_phase_critical_beta"}


class Comparison:
    def __init__(self):
        self.failures, self.compared, self.worst = [], 0, 0.0

    def number(self, path, want, got, floor=0.0):
        self.compared += 1
        if want is None or got is None:
            if want is not got:
                self.failures.append(f"{path}: numpy {want}, attnscope {got}")
            return
        diff = abs(want - got)
        scale = max(abs(want), abs(got))
        if diff > RTOL * scale + floor:
            self.failures.append(f"{path}: numpy {want!r}, attnscope {got!r}")
        elif diff > 0:
            self.worst = max(self.worst, diff / (RTOL * scale + floor))

    def relative(self, path, want, got, floor):
        """want and got within RTOL plus floor of their scale; anything (null too) where the
        floor is infinite."""
        if math.isinf(floor):
            self.compared += 1
            return
        scale = max(abs(want), abs(got)) if want is not None and got is not None else 0.0
        self.number(path, want, got, floor * scale)

    def log_scale(self, path, want, got):
        """Zhai's bound: ln of it to RTOL of itself."""
        tiny = 1e-290
        if want is None or got is None or (want < tiny and got < tiny):
            self.number(path, want, got, floor=tiny)
            return
        self.compared += 1
        if want <= 0 or got <= 0 or abs(math.log(want) - math.log(got)) > RTOL * abs(math.log(want)):
            self.failures.append(f"{path}: numpy {want!r}, attnscope {got!r}")

    def tree(self, path, want, got, floor=0.0):
        if isinstance(want, dict):
            if not isinstance(got, dict):
                self.failures.append(f"{path}: attnscope has {got!r}")
                return
            for key, value in want.items():
                self.tree(f"{path}.{key}", value, got.get(key, "absent"), floor)
        elif isinstance(want, list):
            if not isinstance(got, list) or len(got) != len(want):
                self.failures.append(f"{path}: lengths or types differ")
                return
            for i, (w, g) in enumerate(zip(want, got)):
                self.tree(f"{path}[{i}]", w, g, floor)
        elif isinstance(want, str) or isinstance(got, str):
            self.compared += 1
            if want != got:
                self.failures.append(f"{path}: numpy {want!r}, attnscope {got!r}")
        else:
            self.number(path, want, got, floor)

    def eigenvalues(self, want, got):
        """The same multiset: every eigenvalue of one within 1e-9 of one of the other's."""
        self.compared += 1
        if len(want) != len(got):
            self.failures.append("eigenvalues: counts differ")
            return
        for a, b, name in ((want, got, "numpy's"), (got, want, "attnscope's")):
            for z in a:
                nearest = min(math.hypot(z[0] - w[0], z[1] - w[1]) for w in b)
                if nearest > RTOL:
                    self.failures.append(f"eigenvalues: {name} {z} is {nearest:.3g} from the other's")
                    return


def shape_errors(path, value, shape, T, L):
    """Where value (numpy's, at path) is not of the documented shape."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        errors = [f"{path}.{key}: missing" for key in shape if key not in value]
        errors += [f"{path}.{key}: not documented" for key in value if key not in shape]
        for key in shape.keys() & value.keys():
            errors += shape_errors(f"{path}.{key}", value[key], shape[key], T, L)
        return errors
    length = {LAYERS: L + 1, GRADIENT_LAYERS: L, ROWS: T}.get(shape)
    if length is not None and (not isinstance(value, list) or len(value) != length):
        return [f"{path}: not a list of {length} ({shape})"]
    return []


def gamma(n):
    """γ_n = n·u/(1 − n·u), u = 2⁻⁵³: the relative error of a sum of n products (Higham §3.1)."""
    return n * EPS / 2 / (1 - n * EPS / 2)


def weight_norms(directory):
    """‖W^Q_ℓ‖_F, ‖W^K_ℓ‖_F, ‖W^V_ℓ‖_F of numpy's checkpoint, per layer ℓ = 1..L."""
    norms = {}
    tensors = safetensors_tool.read(os.path.join(directory, "model.safetensors"))[0]
    for name, dtype, _, raw in tensors:
        if name.startswith("model.layers."):
            values = safetensors_tool.values(dtype, raw)
            layer, kind = int(name.split(".")[2]), name.split(".")[4]
            norms.setdefault(layer + 1, {})[kind] = math.sqrt(math.fsum(v * v for v in values))
    return {layer: (n["q_proj"], n["k_proj"], n["v_proj"]) for layer, n in norms.items()}


class Rounding:
    """What one layer's own rounding leaves undetermined, per network and layer ℓ = 1..L (0 at
    ℓ = 0: X0 is the same bits in both programs), from the checkpoint run's token_rms and
    relative_spread r and the checkpoint's weight norms.  Where the tokens have collapsed these
    numbers are that rounding and nothing else, and each program prints its own.
    - The tokens X_ℓ = A(X W^V): each program's computed X_ℓ is within γ_{T+d}|A||X||W^V| of
      the exact product of its inputs, ‖|A|‖₂ ≤ √T + 1 (‖A‖_1·‖A‖_∞ ≤ T for row-stochastic A,
      plus 1 for the centred A − 11ᵀ/T), so relative to ‖X_ℓ‖_F:
      η = γ_{T+d}·(√T + 1)·‖W^V‖_F·rms_{ℓ−1}/rms_ℓ.
    - relative_spread r = ‖PX‖_F/‖X‖_F moves by at most (1 + r)·η under a relative
      perturbation η of X: the two programs' r within spread = 2(1 + r)η.  token_similarity
      (∝ r) and β_c (∝ 1/r of the layer's input) within spread/r relative.
    - The logits x_iᵀ M x_j, M = W^Q W^Kᵀ/√d, formed by three sums of length ≤ d, are within
      γ_{3d}·‖x_i‖‖x_j‖·‖W^Q‖_F‖W^K‖_F/√d of the exact ones, with ‖x_i‖ ≤ ‖x̄‖ + μ ≤
      rms·(1 + r√T) (‖x̄‖ ≤ ‖X‖_F/√T, μ = r‖X‖_F): logits of 1e11 at layer 8 of T = d = 64
      carry errors of order 1 by this worst case.  A logit error ε moves every A_ij by a factor
      within e^{±2ε}, so max_j A_ij and the row entropies within 2ε of themselves relative
      (|ΔH_i| ≤ max_j|ΔS_ij|·Σ_j A_ij|ln A_ij + H_i| ≤ 2εH_i): expm1(2ε) relative.
    The inherited error of each layer's input is RTOL's, as at L = 3 (above)."""

    def __init__(self, numpy_doc, read, directory):
        T, d = numpy_doc["config"]["T"], numpy_doc["config"]["d"]
        weights = weight_norms(directory)
        self.spread, self.logits = {}, {}
        for prefix in ("", "counterpart_"):
            rms, r = read[prefix + "token_rms"], read[prefix + "relative_spread"]
            # null where the tokens are equal within round-off: r below SPREAD_RESOLUTION
            r = [SPREAD_RESOLUTION if v is None else v for v in r]
            spread, logits = [0.0], [0.0]
            for layer in range(1, len(rms)):
                wq, wk, wv = weights[layer]
                if rms[layer] is None or rms[layer - 1] is None:
                    spread.append(math.inf)
                    logits.append(math.inf)
                    continue
                eta = gamma(T + d) * (math.sqrt(T) + 1) * wv * rms[layer - 1] / rms[layer]
                spread.append(2 * (1 + r[layer]) * eta)
                row = rms[layer - 1] * (1 + r[layer - 1] * math.sqrt(T))
                # capped where expm1(2ε) would overflow: any value is within the floor there
                logits.append(min(gamma(3 * d) * row * row * wq * wk / math.sqrt(d), 350.0))
            self.spread[prefix], self.logits[prefix] = spread, logits

    def attention(self, prefix, layer):
        """The relative floor of max_j A_ij and the entropies of layer ℓ."""
        return math.expm1(2 * self.logits[prefix][layer])

    def inverse_spread(self, prefix, layer, spreads, floor=None):
        """The relative floor of a number ∝ r or 1/r (r the least of spreads) at layer ℓ, r
        within floor (default: this layer's spread floor); inf where r is within its floor
        (the tokens equal to within round-off, where null is as right as any value)."""
        known = [s for s in spreads if s is not None]
        r = min(known) if known else 0.0
        floor = self.spread[prefix][layer] if floor is None else floor
        return floor / (r - floor) if r > floor else math.inf


def critical_beta(T, rms, spread):
    """√(2/(q(q − p))) with q = rms², q − p = rms²·spread²·T/(T − 1) (docs/model.md §3)."""
    if rms is None or spread is None or spread == 0:
        return None
    return math.sqrt(2.0 * (T - 1) / (T * rms ** 4 * spread ** 2))


def withdrawn_fields(c, numpy_doc, read, drawn, rounding):
    T = numpy_doc["config"]["T"]
    c.number("sigma (drawn run)", numpy_doc["sigma"], drawn["sigma"])
    theory = drawn["attention_entropy_theory"]
    for key in ("layer", "logit_std", "critical_logit_std", "mean"):
        c.number(f"attention_entropy_theory.{key} (drawn run)",
                 numpy_doc["attention_entropy_theory"][key], theory[key])
    beta = numpy_doc["attention_phase"]["beta"]
    c.number("attention_phase.beta (drawn run)", beta, drawn["attention_phase"]["beta"])
    for prefix, side in (("", "side"), ("counterpart_", "counterpart_side")):
        key, spread = prefix + "attention_phase_critical_beta", prefix + "relative_spread"
        for layer, want in enumerate(numpy_doc[key]):
            if layer == 0:
                c.number(f"{key}[0]", want, read[key][0])
                continue
            # β_c ∝ 1/r of the layer's input: the checkpoint run's floor; the drawn run's own
            # weights are not at hand, so its r is read to docs/model.md's resolution, 1e-12
            checkpoint = rounding.inverse_spread(
                prefix, layer - 1, [read[spread][layer - 1], numpy_doc[spread][layer - 1]])
            drawn_floor = rounding.inverse_spread(prefix, layer - 1, [drawn[spread][layer - 1]],
                                                  SPREAD_RESOLUTION)
            for doc, name, into, floor in ((read, "checkpoint run", numpy_doc, checkpoint),
                                           (drawn, "drawn run", drawn, drawn_floor)):
                derived = critical_beta(T, doc[prefix + "token_rms"][layer - 1],
                                        doc[spread][layer - 1])
                c.relative(f"{key}[{layer}] ({name}'s token_rms, relative_spread)",
                           into[key][layer], derived, floor)
            derived = critical_beta(T, read[prefix + "token_rms"][layer - 1],
                                    read[spread][layer - 1])
            if derived is None or abs(beta - derived) <= (RTOL + checkpoint) * derived:
                c.compared += 1  # β_c is not resolved from β there: either side is right
                continue
            expected = "entropy-collapse" if beta >= derived else "rank-collapse"
            c.tree(f"attention_phase.{side}[{layer}]", numpy_doc["attention_phase"][side][layer],
                   expected)


def null_rules(c, doc, name):
    """docs/model.md §2 in each document alone: token_similarity and centred_stable_rank are
    null exactly where that program's own relative_spread is below 1e-12."""
    for prefix in ("", "counterpart_"):
        for layer, r in enumerate(doc[prefix + "relative_spread"]):
            for key in ("token_similarity", "centred_stable_rank"):
                value = doc[prefix + key][layer]
                c.compared += 1
                if r is not None and (value is None) != (r < SPREAD_RESOLUTION):
                    c.failures.append(f"{prefix}{key}[{layer}] ({name}): {value} where "
                                      f"relative_spread is {r}: null exactly below 1e-12")


def checkpoint_fields(c, numpy_doc, read, rounding):
    """Every number of numpy's but the withdrawn ones against the checkpoint run's, each to
    RTOL and its floor (above)."""
    for key, want in numpy_doc.items():
        if key in META or key in WITHDRAWN:
            continue
        prefix = "counterpart_" if key.startswith("counterpart_") else ""
        base = key[len(prefix):]
        if key == "eigenvalues":
            c.eigenvalues(want, read[key])
        elif key.endswith("stable_rank_minus_one"):
            T, d = numpy_doc["config"]["T"], numpy_doc["config"]["d"]
            for layer, (w, g) in enumerate(zip(want, read[key])):
                floor = 2 * math.sqrt(T * abs(w)) * d * EPS if w is not None else 0.0
                c.number(f"{key}[{layer}]", w, g, floor)
        elif base == "relative_spread":
            for layer, (w, g) in enumerate(zip(want, read[key])):
                c.number(f"{key}[{layer}]", w, g, rounding.spread[prefix][layer])
        elif base == "token_similarity":
            for layer, (w, g) in enumerate(zip(want, read[key])):
                spreads = [numpy_doc[prefix + "relative_spread"][layer],
                           read[prefix + "relative_spread"][layer]]
                floor = rounding.spread[prefix][layer]
                if (w is None) != (g is None) and all(
                        s is not None and abs(s - SPREAD_RESOLUTION) <= floor for s in spreads):
                    c.compared += 1  # r within its floor of the null rule's threshold
                    continue
                c.relative(f"{key}[{layer}]", w, g, rounding.inverse_spread(prefix, layer, spreads))
        elif base in ATTENTION:
            series = want if isinstance(want, dict) else {"": want}
            got = read[key] if isinstance(want, dict) else {"": read[key]}
            for sub, values in series.items():
                path = f"{key}.{sub}" if sub else key
                for layer, (w, g) in enumerate(zip(values, got[sub])):
                    c.relative(f"{path}[{layer}]", w, g, rounding.attention(prefix, layer))
        elif base == "attention_entropy_rounding":
            # Each row's bound (docs/model.md §2, "The rows' own bound") is
            # g·(H + ln p + δ'·min(1, 2(1 − p))) + slack, g = e^{2δ'} − 1, and the programs'
            # rows differ by a factor within 1 + f (Rounding.attention): H by f·H ≤ f·ln T,
            # ln p by f, 2p by 2f·p, so the bounds differ by at most g·f·(ln T + 2)
            T = numpy_doc["config"]["T"]
            deltas = read[prefix + "attention_logit_rounding"]
            for layer, (w, g) in enumerate(zip(want, read[key])):
                grow = math.expm1(2 * min(deltas[layer] or 0.0, 350.0))
                floor = grow * rounding.attention(prefix, layer) * (math.log(T) + 2)
                c.number(f"{key}[{layer}]", w, g, floor)
        elif key.endswith("attention_entropy_zhai_bound"):
            for layer, (w, g) in enumerate(zip(want, read[key])):
                c.log_scale(f"{key}[{layer}]", w, g)
        else:
            floor = 2 * numpy_doc["config"]["T"] * EPS if key in ROUNDING_ON_UNIT_SCALE else 0.0
            c.tree(key, want, read.get(key, "absent"), floor)


def alter(doc, how, path):
    """--perturb: multiplies the number at path (key.key[i]…) by 1 + 100·RTOL; --drop: removes
    the field (or list entry) at path."""
    parts = path.replace("]", "").replace("[", ".").split(".")
    node = doc
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = int(parts[-1]) if isinstance(node, list) else parts[-1]
    if how == "--perturb":
        node[last] *= 1 + 100 * RTOL
    else:
        del node[last]


def main(argv):
    if len(argv) not in (5, 7) or (len(argv) == 7 and argv[5] not in ("--perturb", "--drop")):
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        numpy_doc, read, drawn = (json.load(open(path)) for path in argv[1:4])
    except (OSError, ValueError) as e:
        print(f"numpy_ref_compare: {e}", file=sys.stderr)
        return 2
    checkpoint = argv[4]
    if len(argv) == 7:
        alter(numpy_doc, argv[5], argv[6])
    config = numpy_doc.get("config", {})
    errors = shape_errors("numpy's document", numpy_doc, DOCUMENTED, config.get("T"),
                          config.get("depth"))
    if len(numpy_doc) != DOCUMENTED_COUNT:
        errors.append(f"numpy's document has {len(numpy_doc)} fields, {DOCUMENTED_COUNT} documented")
    if errors:
        print("\n".join(errors[:20]))
        return 1
    try:
        rounding = Rounding(numpy_doc, read, checkpoint)
    except (OSError, ValueError, KeyError, struct.error) as e:
        print(f"numpy_ref_compare: {checkpoint}: not numpy_ref's checkpoint ({e!r})", file=sys.stderr)
        return 2
    c = Comparison()
    checkpoint_fields(c, numpy_doc, read, rounding)
    withdrawn_fields(c, numpy_doc, read, drawn, rounding)
    null_rules(c, numpy_doc, "numpy")
    null_rules(c, read, "checkpoint run")
    if c.failures:
        print("\n".join(c.failures[:20]))
        return 1
    print(f"{c.compared} numbers agree; the largest difference is {c.worst:.2g} of its tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
