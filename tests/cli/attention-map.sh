#!/bin/bash
# The attention map in --batch (docs/model.md §2): with --attention-map product the document's
# product_column_mass is Σ_i (A_8⋯A_1)_ij / T of the shown head's matrices, checked against a
# loop-by-loop product in Python of the matrices each layer's run exports in full
# (--export-matrix: attention_matrix.csv), and against the exported product itself; under a
# causal mask at depth 8 the first column carries the mass.  attention_map.svg draws a causal
# map lower-triangular; --batch --export-matrix is refused without --export.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

settings="-T 32 -d 32 -L 8 --mask causal -n ln"
for l in 1 2 3 4 5 6 7 8; do
    # shellcheck disable=SC2086 # the settings are words
    "$BIN" --batch $settings -l "$l" --export "$tmp/layer$l" --export-matrix >"$tmp/layer$l.json" 2>"$tmp/err" ||
        not_ok "layer $l: the export failed ($(cat "$tmp/err"))"
done
# shellcheck disable=SC2086
"$BIN" --batch $settings -l 8 --attention-map product --export "$tmp/product" --export-matrix \
    >"$tmp/product.json" 2>"$tmp/err"
check "the product run exits 0 and writes 15 files (input.csv among them)" grep -q "wrote 15 files" "$tmp/err"

product_matches_loops() {
    "$PY" - "$tmp" <<'PY'
import csv, json, sys
tmp = sys.argv[1]
def matrix(path):
    rows = [r for r in csv.reader(l for l in open(path) if not l.startswith("#"))]
    assert rows[0][0] == "query" and rows[0][1] == "key_1", rows[0][:2]
    return [[float(x) for x in r[1:]] for r in rows[1:]]
A = {l: matrix(f"{tmp}/layer{l}/attention_matrix.csv") for l in range(1, 9)}
T = len(A[1])
for l, a in A.items():
    for i in range(T):
        assert abs(sum(a[i]) - 1) < 1e-12, (l, i, sum(a[i]))
        assert all(a[i][j] == 0 for j in range(i + 1, T)), f"layer {l} row {i}: a key after the query"
P = [row[:] for row in A[1]]
for l in range(2, 9):
    P = [[sum(A[l][i][k] * P[k][j] for k in range(T)) for j in range(T)] for i in range(T)]
mass = [sum(P[i][j] for i in range(T)) / T for j in range(T)]
doc = json.load(open(f"{tmp}/product.json"))
got = doc["product_column_mass"]
assert len(got) == T
worst = max(abs(g - m) for g, m in zip(got, mass))
assert worst < 1e-12, f"product_column_mass off by {worst}"
exported = matrix(f"{tmp}/product/attention_product.csv")
worst = max(abs(exported[i][j] - P[i][j]) for i in range(T) for j in range(T))
assert worst < 1e-12, f"attention_product.csv off by {worst}"
assert matrix(f"{tmp}/product/attention_matrix.csv") == A[8], "the product run's A_8 differs"
assert abs(sum(got) - 1) < 1e-12, sum(got)
assert got[0] == max(got) and got[0] > 0.5, f"first column {got[0]}, largest {max(got)}"
print(f"  first column {got[0]:.4f}, next largest {sorted(got)[-2]:.4f}")
PY
}
check "product_column_mass and attention_product.csv are the loop-by-loop A_8...A_1 of the exported A_l, the first column carrying most of the mass" product_matches_loops

null_without_product() {
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["product_column_mass"] is not None or d["config"]["attention_map"] != "layer")' "$tmp/layer8.json"
}
check "without --attention-map product: product_column_mass is null" null_without_product
check "without the product: no attention_product.csv" test ! -e "$tmp/layer8/attention_product.csv"

svg_lower_triangular() { # dir
    xmllint --noout "$1/attention_map.svg" || return 1
    "$PY" - "$1/attention_map.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
cells = re.search(r'<g class="map">(.*?)</g>', svg, re.S).group(1)
rects = [(float(x), float(y), float(w)) for x, y, w in
         re.findall(r'<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"', cells)]
assert rects, "no cells"
x0 = min(x for x, _, _ in rects); y0 = min(y for _, y, _ in rects); w = rects[0][2]
ij = {(round((y - y0) / w), round((x - x0) / w)) for x, y, _ in rects}
n = max(i for i, _ in ij) + 1
assert all(j <= i for i, j in ij), "a cell above the diagonal"
assert all((i, i) in ij for i in range(n)), "a blank diagonal cell"
PY
}
check "attention_map.svg: a causal map is lower-triangular, its diagonal drawn" svg_lower_triangular "$tmp/layer8"
check "attention_map.svg of the product: lower-triangular too" svg_lower_triangular "$tmp/product"
check "attention_map.svg of the product: the column mass as a line of T points" \
    "$PY" -c 'import re, sys; p = re.search(r"class=\"column-mass\"[^>]*points=\"([^\"]*)\"", open(sys.argv[1]).read()).group(1).split(); sys.exit(len(p) != 32)' "$tmp/product/attention_map.svg"

refused() { refused_running "$BIN" -- "$1" -- "${@:2}"; } # message args...
check "--batch --export-matrix without --export is refused, exit 2" refused \
    "--export-matrix: accepted with --batch only beside --export DIR" --batch -T 8 -d 8 --export-matrix
check "--attention-map names what it accepts" refused "layer|product" --batch --attention-map sum
finish
