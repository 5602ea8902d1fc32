#!/bin/bash
# ||K||_2 is certified within its stated interval or null (docs/model.md §8.2): on 16 heads with
# a GELU MLP (T = 16, d = 64, 15 layers) the tokens grow by ~5x a layer, and from layer 7 on
# the products' rounding bound outgrows ||K||_2's leading digits; main reported the two paths'
# values there unqualified, 4.2% apart at layer 15.  Against the exact path (K built, its SVD
# or LU extremes the reference), on both networks: every reported jacobian_norm carries a
# jacobian_norm_error within JACOBIAN_NORM_TOLERANCE (1e-3) of it, the exact value lies in the
# matrix-free path's interval, kappa_jacobian is null wherever jacobian_norm is, and the
# warning counts the null layers.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

settings=(--conditioning --no-confirm -T 16 -d 64 -L 15 --heads 16 --mlp gelu)
batch_document "$tmp/exact" "${settings[@]}" --conditioning-path exact
batch_document "$tmp/kron" "${settings[@]}" --conditioning-path kron

check "jacobian_norm within its certified error of the exact path's, or null with the warning" \
    "$PY" - "$tmp/exact.json" "$tmp/kron.json" <<'PY'
import json, re, sys
exact, free = (json.load(open(p))["conditioning"] for p in sys.argv[1:3])
assert exact["jacobian_exact"] is True and free["jacobian_exact"] is False
bad, compared, nulls = [], 0, {}
for name, doc in (("exact", exact), ("kron", free)):
    nulls[name] = 0
    for net in ("", "counterpart_"):
        for l, (v, e, k) in enumerate(zip(doc[net + "jacobian_norm"], doc[net + "jacobian_norm_error"],
                                          doc[net + "kappa_jacobian"]), 1):
            assert e is not None and e >= 0, (name, net, l, e)
            if v is None:
                nulls[name] += 1
                if k is not None:
                    bad.append(f"{name} {net}layer {l}: kappa_jacobian {k} without jacobian_norm")
            elif not e <= 1e-3 * v:
                bad.append(f"{name} {net}layer {l}: ||K|| {v} reported with error {e}")
for net in ("", "counterpart_"):
    rows = zip(exact[net + "jacobian_norm"], exact[net + "jacobian_norm_error"],
               free[net + "jacobian_norm"], free[net + "jacobian_norm_error"])
    for l, (x, ex, v, ev) in enumerate(rows, 1):
        if x is None or v is None:
            continue
        compared += 1
        if not abs(v - x) <= ev + ex:
            bad.append(f"{net}layer {l}: exact {x!r} +- {ex:.3g}, kron {v!r} +- {ev:.3g}")
# Layer 15 of the network, 4.2% apart on main: not reported where uncertain.
assert exact["jacobian_norm"][14] is None and free["jacobian_norm"][14] is None
for name, doc in (("exact", exact), ("kron", free)):
    said = [w for w in doc["warnings"] if "leaves ||K||_2 uncertain" in w]
    count = int(re.search(r"at (\d+) of the 30 layers", said[0]).group(1)) if said else 0
    if count != nulls[name]:
        bad.append(f"{name}: the warning counts {count} null layers, the document has {nulls[name]}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad or compared < 12 else 0)
PY
finish
