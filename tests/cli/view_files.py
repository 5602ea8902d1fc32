"""view_files.py DIR DOC.json VIEW...: the files an export wrote for each view (sweep, gradient,
similarity, entropy, conditioning) hold the batch document's numbers: each CSV its values exactly (both
print a double in its shortest round-trip form), each SVG its points where its axes, read off
their labelled ticks, put them (svg_points.py).  Prints what it checked; fails on the first
mismatch."""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_points import check_histogram, check_series, log_units  # noqa: E402


def table(path):
    lines = [line for line in open(path) if not line.startswith("#")]
    header, *body = list(csv.reader(lines))
    number = lambda text: None if text == "" else float(text)
    return header, [[number(v) for v in row] for row in body]


def columns_equal(path, names, values):
    header, body = table(path)
    assert header == names, (path, header, names)
    got = [list(c) for c in zip(*body)] if body else [[] for _ in names]
    for name, column, want in zip(names, got, values):
        assert column == want, (path, name, column, want)
    return len(body)


def layers(first, last):
    return [float(l) for l in range(first, last + 1)]


def sweep(out, doc):
    w = doc["width_sweep"]
    names = ["T", "stable_rank_minus_one", "stable_rank_minus_one_gap"]
    rows = columns_equal(out + "/width_sweep.csv", names, [w[n] for n in names])
    t = log_units(w["T"])
    points = check_series(open(out + "/width_sweep.svg").read(), True, True, {
        0: list(zip(t, log_units(w["stable_rank_minus_one"]))),
        1: list(zip(t, log_units(w["stable_rank_minus_one_gap"])))})
    return rows, points


def layer_curves(out, stem, doc, names, first, units):
    """stem.csv and stem.svg of the network's and counterpart's curves against depth from
    layer `first`, on a log y axis whose units are units(values)."""
    x = layers(first, doc["config"]["depth"])
    rows = columns_equal(f"{out}/{stem}.csv", ["layer"] + names, [x] + [doc[n] for n in names])
    points = check_series(open(f"{out}/{stem}.svg").read(), False, True, {
        k: list(zip(x, units(doc[n]))) for k, n in enumerate(names)})
    return rows, points


def gradient(out, doc):
    # Log10 given: the axis's units are the values themselves.
    return layer_curves(out, "gradient", doc,
                        ["log10_gradient_norm", "counterpart_log10_gradient_norm"], 1, list)


def similarity(out, doc):
    return layer_curves(out, "token_similarity", doc,
                        ["token_similarity", "counterpart_token_similarity"], 0, log_units)


def entropy(out, doc):
    rows = doc["shown_attention_entropy"]["rows"]
    count = columns_equal(out + "/row_entropies.csv", ["row", "row_entropy"],
                          [[float(i + 1) for i in range(len(rows))], rows])
    points = check_histogram(open(out + "/row_entropies.svg").read(),
                             sorted(rows, reverse=True), every_value=True)
    return count, points


def drawn_singular_values(doc):
    """What the conditioning view's histogram draws: K's singular values on the exact path,
    else B's, every product s_i(A)·s_j(W_VO) (every k-th of each factor above 256),
    descending; none with several heads."""
    shown = doc["conditioning"]["shown_layer"]
    if shown["jacobian_singular_values"] is not None:
        return shown["jacobian_singular_values"]
    if doc["config"]["heads"] > 1:
        return []
    a, w = shown["attention_singular_values"], shown["value_output_singular_values"]
    step_a, step_w = math.ceil(len(a) / 256), math.ceil(len(w) / 256)
    return sorted((x * y for x in a[::step_a] for y in w[::step_w]), reverse=True)


def conditioning(out, doc):
    k = doc["conditioning"]
    depth = doc["config"]["depth"]
    x = layers(1, depth)

    def skip(prefix):  # κ(K + I) on the exact path, else the proved bound where κ(K) is null
        if k["jacobian_exact"]:
            return k[prefix + "kappa_jacobian_skip"]
        return [b if j is None else None
                for j, b in zip(k[prefix + "kappa_jacobian"], k[prefix + "kappa_jacobian_lower"])]

    curves = [k["kappa_jacobian"], skip(""), k["kappa_attention_product"],
              k["counterpart_kappa_jacobian"], skip("counterpart_")]
    points = check_series(open(out + "/conditioning.svg").read(), False, True,
                          {n: list(zip(x, log_units(c))) for n, c in enumerate(curves)})
    values = drawn_singular_values(doc)
    rows = columns_equal(out + "/conditioning_singular_values.csv", ["index", "singular_value"],
                         [[float(i + 1) for i in range(len(values))], values])
    if values:
        points += check_histogram(open(out + "/conditioning_singular_values.svg").read(), values)
    return rows, points


VIEWS = {"sweep": sweep, "gradient": gradient, "similarity": similarity, "entropy": entropy,
         "conditioning": conditioning}

if __name__ == "__main__":
    out, doc = sys.argv[1], json.load(open(sys.argv[2]))
    for view in sys.argv[3:]:
        rows, points = VIEWS[view](out, doc)
        assert rows > 0 and points > 0, (view, rows, points)
        print(f"  {view}: {rows} CSV rows equal the document's, {points} points where it puts them")
