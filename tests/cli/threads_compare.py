"""Two --batch documents of one configuration, computed with OpenBLAS on 1 and on 2 threads,
held to each other: every number one prints, the other prints too, to 1e-6 of its scale.

Why 1e-6.  The thread count changes only the order of BLAS's sums, so a number that is not
round-off moves by its own rounding: a few γ_n (n ≤ T + d, γ_n = n·u/(1 − n·u) ≈ 6e-14 at
n = 512) relative, amplified by the conditioning of the layers it passed; measured over these
configurations (round-off.sh's) the largest such move is 7.9e-10 relative (the window
mask's), 2.3e-13 at the default settings.  A number that is round-off
moves by its own size (docs/model.md §2, "Round-off from a layer on": sr − 1 of the collapsed
gap-removed network read 4.8e-10 on one thread and 1.2e-9 on two).  1e-6 sits three decades
above the one and several below the other.

The scale of a number is itself, except where its digits are absolute: a singular value or
eigenvalue of the shown matrix is within p·u·‖A‖₂ of the exact (Weyl; LAPACK Users' Guide
§4.7, §4.9), so its scale is the largest modulus of its spectrum; a mean cosine lies in
[−1, 1] and each cosine within ~d·u of the exact, so its scale is 1; a standard deviation (and
√M2) over the seeds moves by as much as the values it is taken of, so its scale is the mean.

The attention rows' statistics read each logit's absolute rounding, which without LayerNorm
(tokens of norm 1e7 and more) is no longer small against the logits' differences: the
document bounds it per layer, δ = `attention_logit_rounding` (docs/model.md §2, "Round-off
from a layer on"), and a row's entropy computed from logits within δ of the exact is within a
factor e^{±4δ} of the exact row's, its largest weight within e^{±2δ}.  The rows' own bound
(docs/model.md §2, "The rows' own bound") is often far smaller, and a statistic is printed only
where it is below the resolution, half the value or 1e-6 where the value is near 0: so each
document's value is within the smaller of the two of the exact — for the mean entropy the
published `attention_entropy_rounding`, for the others the factor or that resolution — and
the two documents agree to the sum of their bounds, or to 1e-6 of the value where that is
larger.  Where the bound reaches the resolution the statistic is null in both (a number in
one, null in the other, is a disagreement).

Usage: threads_compare.py one.json two.json — prints each disagreement and exits 1 on any.
"""
import json
import math
import sys

TOLERANCE = 1e-6
RESOLUTION_FLOOR = 1e-6  # ENTROPY_RESOLUTION_FLOOR
# The rows' statistics and the power of e^δ their bound takes (see above).
ROUNDING_FACTOR = {"attention_entropy": 4, "max_attention_mean": 2,
                   "max_attention_mean_head_average": 2}
ABSOLUTE_UNIT = ("token_cosine_mean", "counterpart_token_cosine_mean")


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def spectrum_scale(doc):
    moduli = [abs(complex(*z)) for z in doc.get("eigenvalues") or [] if z is not None]
    moduli += [abs(s) for s in doc.get("singular_values") or [] if s is not None]
    return max(moduli, default=0.0)


def scale_of(path, key, value, doc, index):
    if key in ("eigenvalues", "singular_values"):
        return spectrum_scale(doc)
    if key in ABSOLUTE_UNIT:
        return 1.0
    if key.endswith("stable_rank_std") or key.endswith("stable_rank_m2"):
        mean = doc[key.replace("_std", "_mean").replace("_m2", "_mean")][index]
        return abs(mean) if mean is not None else abs(value)
    return abs(value)


def layer_value(doc, key, index):
    series = doc.get(key) or []
    return series[index] if index < len(series) else None


def rounding_tolerance(path, key, x, y, a, b, index):
    """What the rounding bounds let a row statistic move (0 for other numbers)."""
    prefix = "counterpart_" if key.startswith("counterpart_") else ""
    power = ROUNDING_FACTOR.get(key[len(prefix):])
    if power is None or index is None:
        return 0.0
    total = 0.0
    for doc, value in ((a, x), (b, y)):
        bounds = [max(abs(value) / 2, RESOLUTION_FLOOR)]  # printed: its bound is below this
        if key[len(prefix):] == "attention_entropy" and ".mean[" in path:
            bounds.append(layer_value(doc, prefix + "attention_entropy_rounding", index))
        delta = layer_value(doc, prefix + "attention_logit_rounding", index)
        if delta is not None:
            bounds.append(math.expm1(power * delta) * abs(value))
        total += min(bound for bound in bounds if bound is not None)
    return total


def compare(a, b):
    bad = []

    def walk(x, y, path, key, doc, index):
        if isinstance(x, dict):
            if not isinstance(y, dict):
                bad.append(f"{path}: {x!r} against {y!r}")
                return
            for k in x:
                if k == "timings":
                    continue
                walk(x[k], y.get(k), f"{path}.{k}", k if path == "" else key, doc, index)
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                bad.append(f"{path}: lengths differ")
                return
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]", key, doc, i if index is None else index)
        elif number(x) or number(y):
            if not (number(x) and number(y)):
                bad.append(f"{path}: {x!r} on one thread, {y!r} on two")
                return
            if x == y:
                return
            if key.endswith("stable_rank_m2"):  # compared as √M2, the std's scale times √n
                x, y = math.sqrt(max(x, 0)), math.sqrt(max(y, 0))
            scale = max(scale_of(path, key, x, a, index), scale_of(path, key, y, b, index))
            allowed = max(TOLERANCE * scale, rounding_tolerance(path, key, x, y, a, b, index))
            if not abs(x - y) <= allowed:
                bad.append(f"{path}: {x!r} on one thread, {y!r} on two (scale {scale:.3g})")

    walk(a, b, "", "", a, None)
    return bad


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    bad = compare(a, b)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
