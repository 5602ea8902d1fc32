"""Checks one attnscope --batch document against the JSON contract (README, Batch mode).

Usage: contract.py T DEPTH < document.json   (exit 1 with the reason on failure)
Rejects NaN/Infinity tokens, missing fields, wrong shapes and unsorted values.
"""
import json
import math
import sys


def reject(token):
    raise ValueError(f"non-JSON number {token}")


def main():
    T, depth = int(sys.argv[1]), int(sys.argv[2])
    doc = json.loads(sys.stdin.read(), parse_constant=reject)
    assert doc["attnscope"] == "0.1.0", doc["attnscope"]
    config = doc["config"]
    for key in ("T", "d", "d_qk", "depth", "sigma_qk", "attention", "mask", "window", "gap",
                "layernorm", "skip", "seed", "seeds", "layer"):
        assert key in config, f"config lacks {key}"
    assert config["T"] == T and config["depth"] == depth, config
    assert config["d_qk"] == config["d"]
    numeric = (int, float)
    # sigma is the log-normal theory's (docs/model.md §1.2): none where W^Q or W^K is a factor
    # of alpha Z + beta I (cutting-skip, mimetic; markov draws its logits with sigma_qk) or
    # where QK-norm makes every logit sqrt(d_h) cos(angle), with a warning that says so; null
    # with a warning where it overflows.
    factor = config.get("init") in ("cutting-skip", "mimetic") and "scheme" in (
        config.get("init_query", "scheme"), config.get("init_key", "scheme"))
    if factor and config["attention"] != "markov":
        assert doc["sigma"] is None, doc["sigma"]
    elif config.get("qk_norm", "none") != "none" and config["attention"] != "markov":
        assert doc["sigma"] is None, doc["sigma"]
        assert any(w.startswith("QK-norm") for w in doc["warnings"]), doc["warnings"]
    elif config.get("input") == "embedding" and config["attention"] not in (
            "markov", "uniform", "identity"):
        assert doc["sigma"] is None, doc["sigma"]
        assert any(w.startswith("embedding input") for w in doc["warnings"]), doc["warnings"]
    elif doc["sigma"] is None:
        assert any("sigma overflows" in w for w in doc["warnings"]), doc["warnings"]
    else:
        assert isinstance(doc["sigma"], numeric)
    for key in ("stable_rank", "stable_rank_minus_one", "stable_rank_mean", "stable_rank_std",
                "counterpart_stable_rank", "token_similarity"):
        values = doc[key]
        assert len(values) == depth + 1, f"{key}: {len(values)} values for depth {depth}"
        assert all(v is None or isinstance(v, numeric) for v in values), key
    for key in ("gradient_norm", "log10_gradient_norm", "counterpart_gradient_norm"):
        values = doc[key]
        assert len(values) == depth, f"{key}: {len(values)} values for depth {depth}"
        assert all(v is None or isinstance(v, numeric) for v in values), key
    sr = doc["stable_rank"]
    if sr[0] is not None and config.get("input", "orthonormal") == "orthonormal":
        assert abs(sr[0] - T) <= 1e-9 * T, f"sr(Sigma_0) = {sr[0]}, expected T = {T}"
    elif sr[0] is not None:  # embedding rows: rank <= min(T, d)
        assert 1 - 1e-12 <= sr[0] <= min(T, config["d"]) * (1 + 1e-12), sr[0]
    for v, m in zip(sr, doc["stable_rank_minus_one"]):
        if v is not None and m is None:  # X rank one within round-off: sr is 1 to every digit
            assert abs(v - 1) <= 1e-12, (v, m)
        elif v is not None:
            assert v >= 1 - 1e-12 and abs((v - 1) - m) <= 1e-12 * v, (v, m)
    eig = doc["eigenvalues"]
    assert len(eig) == T and all(len(e) == 2 for e in eig), "eigenvalues: T pairs"
    moduli = [math.hypot(*e) for e in eig if None not in e]
    assert all(a >= b - 1e-15 for a, b in zip(moduli, moduli[1:])), "eigenvalues by modulus"
    sv = doc["singular_values"]
    assert len(sv) == T, "singular values: T values"
    known = [s for s in sv if s is not None]
    assert all(a >= b for a, b in zip(known, known[1:])), "singular values descending"
    assert isinstance(doc["warnings"], list) and all(isinstance(w, str) for w in doc["warnings"])
    check_readouts(doc, config, moduli, known, sr)
    check_entropy(doc, config, depth)


def check_readouts(doc, config, moduli, singular, sr):
    """The readouts of docs/model.md §2, recomputed here from the document's own arrays."""
    readouts = doc["readouts"]
    assert set(readouts) == {"one_minus_abs_lambda2", "s1_over_s2", "count_abs_lambda_above_half",
                             "stable_rank_shown_layer"}, readouts
    T, layer = config["T"], config["layer"]
    # The spectral gap and the count need a row-stochastic matrix: a row-stochastic kind with
    # its gap not removed and no sinks (docs/model.md §2); round-off below 1e-12 reads 0.
    stochastic = (config["attention"] in ("softmax", "markov", "uniform", "identity")
                  and doc["shown_gap"] == "off" and not has_sink(config))
    gap = readouts["one_minus_abs_lambda2"]
    count = readouts["count_abs_lambda_above_half"]
    if stochastic:
        expected = 1 - moduli[1]
        expected = 0.0 if abs(expected) < 1e-12 else expected
        assert len(moduli) == T and abs(gap - expected) <= 1e-15, (gap, moduli[:2])
        assert count == sum(m > 0.5 for m in moduli), (readouts, moduli[:3])
    else:
        assert gap is None and count is None, f"not row-stochastic, yet {readouts}"
    # The outlier: |λ1| at least twice the bulk radius |λ2|, else null.
    apart = moduli[0] > 0 and moduli[0] >= 2 * moduli[1]
    assert doc["outlier"] == (0 if apart else None), (doc["outlier"], moduli[:2])
    ratio = readouts["s1_over_s2"]
    if len(singular) == T and singular[1] > 1e-12 * singular[0]:
        assert abs(ratio - singular[0] / singular[1]) <= 1e-14 * ratio, (ratio, singular[:2])
    else:
        assert ratio is None, f"s1/s2 = {ratio} where s2 is round-off"
    shown = readouts["stable_rank_shown_layer"]
    assert shown == sr[layer], f"stable_rank_shown_layer {shown}, stable_rank[{layer}] {sr[layer]}"


ENTROPY_MEMBERS = ("mean", "min", "max", "normalised_mean", "mean_head_average",
                   "min_head_average", "max_head_average", "normalised_mean_head_average")
MAX_WEIGHT_KEYS = ("max_attention_mean", "max_attention_mean_head_average",
                   "counterpart_max_attention_mean", "counterpart_max_attention_mean_head_average")


def has_sink(config):
    """Sinks (--sink, null for none) act on softmax rows only."""
    return config.get("sink") is not None and config["attention"] == "softmax"


def check_entropy(doc, config, depth):
    """docs/model.md §2: row entropies per layer, index = layer (0: the input, null), null
    throughout (with a warning) where the rows are not distributions, within [0, ln T]."""
    T = config["T"]
    defined = config["attention"] in ("softmax", "markov", "uniform", "identity")
    said = any(w.startswith("attention entropy is null: ") for w in doc["warnings"])
    assert said == (not defined), (config["attention"], doc["warnings"])
    for group in ("attention_entropy", "counterpart_attention_entropy"):
        entropy = doc[group]
        assert tuple(entropy) == ENTROPY_MEMBERS, f"{group}: {list(entropy)}"
        for member, values in entropy.items():
            assert len(values) == depth + 1 and values[0] is None, f"{group}.{member}: {values}"
            if not defined:
                assert all(v is None for v in values), f"{group}.{member} defined: {values}"
            # With sinks a row is a distribution over its keys and the sink: T + 1 outcomes.
            top = 1 if member.startswith("normalised") else math.log(T + has_sink(config))
            assert all(v is None or -1e-15 <= v <= top * (1 + 1e-12) for v in values), (
                f"{group}.{member} outside [0, {top}]: {values}")
        for suffix in ("", "_head_average"):
            rows = zip(entropy["min" + suffix], entropy["mean" + suffix], entropy["max" + suffix])
            assert all(lo is None or lo <= m * (1 + 1e-12) and m <= hi * (1 + 1e-12)
                       for lo, m, hi in rows), f"{group}: min <= mean <= max"
    theory = doc["attention_entropy_theory"]
    assert set(theory) == {"layer", "mean", "logit_std", "critical_logit_std", "note"}, theory
    assert theory["layer"] == 1 and abs(theory["critical_logit_std"] - math.sqrt(2 * math.log(T))) <= 1e-15 * T
    if theory["mean"] is None:
        assert isinstance(theory["note"], str) and theory["note"], theory
    else:
        s = theory["logit_std"]
        assert theory["note"] is None and config["attention"] == "softmax", theory
        assert s < theory["critical_logit_std"], theory
        assert abs(theory["mean"] - (math.log(T) - s * s / 2)) <= 1e-14 * math.log(T), theory
    for key in MAX_WEIGHT_KEYS:
        values = doc[key]
        assert len(values) == depth + 1 and values[0] is None, f"{key}: {values}"
        if not defined:
            assert all(v is None for v in values), f"{key} defined: {values}"
        # A row's largest key weight is at least 1/T, unless a sink takes a share of the row.
        low = 0 if has_sink(config) else 1 / T
        assert all(v is None or low * (1 - 1e-12) <= v <= 1 + 1e-12 for v in values), key


def check_geometry(doc, config, depth):
    """docs/model.md §2, what the stable rank hides: per layer, both networks; the centred
    stable rank null only where the tokens are equal (a warning says 0/0) or the network
    is dead, and in [1, T - 1]; energy off the top and the relative spread in [0, 1] (null
    where round-off: the energy where sr is 1, the spread under the 0/0 warning) with the
    spread's square at least the energy (the mean direction holds at most s1^2); the mean
    cosine in [-1/(T - 1), 1]; the RMS norm positive."""
    T = config["T"]
    zero_zero = any("centred_stable_rank is null (0/0)" in w for w in doc["warnings"])
    tol = 1e-12
    for p in ("", "counterpart_"):
        arrays = {k: doc[p + k] for k in ("centred_stable_rank", "energy_off_top",
                                          "relative_spread", "token_cosine_mean", "token_rms")}
        for k, values in arrays.items():
            assert len(values) == depth + 1, f"{p}{k}: {len(values)} values for depth {depth}"
        for l in range(depth + 1):
            c, e, s, cos, rms = (arrays[k][l] for k in arrays)
            if doc[p + "stable_rank"][l] is None:
                continue
            assert c is not None or zero_zero, f"{p}centred_stable_rank[{l}] null, no warning"
            assert c is None or 1 - tol <= c <= (T - 1) * (1 + tol), f"{p}centred {l}: {c}"
            # null where X is rank one within round-off (sr is 1), the spread where the
            # tokens are equal within it (docs/model.md §2, "Round-off from a layer on")
            assert e is not None or abs(doc[p + "stable_rank"][l] - 1) <= tol, f"{p}energy {l}"
            assert s is not None or zero_zero, f"{p}relative_spread[{l}] null, no warning"
            assert e is None or -tol <= e <= 1 - 1 / T + tol, f"{p}energy_off_top {l}: {e}"
            assert s is None or -tol <= s <= 1 + tol, f"{p}spread {l}: {s}"
            assert s is None or e is None or s * s >= e - 1e-9, f"{p}spread {l}: {s}, {e}"
            assert cos is None or -1 / (T - 1) - tol <= cos <= 1 + tol, f"{p}cosine {l}: {cos}"
            assert rms is None or rms > 0, f"{p}token_rms {l}: {rms}"


try:
    main()
except (AssertionError, KeyError, ValueError, TypeError) as e:
    print(f"contract: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)
