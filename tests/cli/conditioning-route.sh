#!/bin/bash
# How each layer's s_min(K) and κ(B) were obtained (docs/model.md §8.1, "Singular by structure:
# no s_min work", and §8.2's jacobian_s_min_route, kappa_dominant_route, jacobian_singular):
# the route is "structure" at every layer of both networks exactly where the settings prove K
# (or B) singular, on the exact path and off it, with jacobian_s_min null there; the exact
# path's spectrum of the shown layer holds the zeros the structure predicts (their count, below
# n·ε·‖K‖) and, where no structure is claimed, none.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

# name args...: the exact path's document in name_exact.json, the matrix-free path's in name_free
both_paths() {
    check "$1: the exact path runs" batch_document "$tmp/$1_exact" --conditioning "${@:2}"
    check "$1: the matrix-free path runs" batch_document "$tmp/$1_free" --conditioning "${@:2}" \
        --conditioning-path lanczos
}

# Two heads of d_h = 4 on d = 16 (H·d_h = 8 < d); the same with heads of the width (no
# structure); grouped K/V under the causal mask with a sink (rank of token 1's block
# ≤ G·d_h + H − G = 12 < 16); the branch norm of unit rows (ε = 0), `ln` (J_LN sends each
# row's 1 and its own direction to 0) and `rms` (its own direction).
both_paths narrow -T 8 -d 16 -L 2 --heads 2 --head-dim 4 --wo gaussian
both_paths wide -T 8 -d 16 -L 2 --heads 2 --wo gaussian
both_paths grouped -T 8 -d 16 -L 2 --heads 8 --kv-heads 4 --wo gaussian -m causal --sink 0
both_paths branch_ln -T 8 -d 16 -L 2 --ln-place peri -n ln
both_paths branch_rms -T 8 -d 16 -L 2 --ln-place peri -n rms

# name zeros: every route and null as the structure (zeros > 0) or its absence (0) says; the
# shown layer's exact spectrum has exactly `zeros` values below n·eps·s_max, the next far above.
routes() {
    says "
name, zeros = '$1', $2
exact, free = d[name + '_exact']['conditioning'], d[name + '_free']['conditioning']
assert exact['jacobian_exact'] and not free['jacobian_exact']
for k in (exact, free):
    assert (k['jacobian_singular'] is not None) == (zeros > 0), k['jacobian_singular']
    for prefix in ('', 'counterpart_'):
        route = k[prefix + 'jacobian_s_min_route']
        if zeros:
            assert route == ['structure'] * 2, (prefix, route)
            assert k[prefix + 'jacobian_s_min'] == [None] * 2, k[prefix + 'jacobian_s_min']
            assert k[prefix + 'kappa_jacobian'] == [None] * 2
            assert k[prefix + 'kappa_jacobian_lower'] == [None] * 2
        else:  # sought: certified on the exact path, Lanczos's answer (maybe null) off it
            assert 'structure' not in route and None not in route, (prefix, route)
            assert k is free or None not in k[prefix + 'jacobian_s_min'], k[prefix + 'jacobian_s_min']
    assert all(x is not None and x > 0 for x in k['jacobian_norm'])
assert exact['jacobian_s_min_route'] == ['exact'] * 2 or zeros
assert free['jacobian_s_min_route'] != ['exact'] * 2
sv = sorted(exact['shown_layer']['jacobian_singular_values'])
n = len(sv)
floor = n * 2.0 ** -52 * sv[-1]
found = sum(1 for s in sv if s <= floor)
assert found == zeros, (found, zeros, sv[:zeros + 2])
assert sv[zeros] > 1e6 * floor, (sv[zeros], floor)
" "$1_exact" "$1_free"
}
check "H*d_h = 8 < 16: 'structure' at every layer of both networks on both paths, s_min null; T*(d - H*d_h) = 64 zeros" routes narrow 64
check "heads of the width: no structure, s_min sought on both paths, no zero in the spectrum" routes wide 0
check "grouped causal with a sink: 'structure'; d - (G*d_h + H - G) = 4 zeros" routes grouped 4
check "peri-LN, ln of unit rows: 'structure'; 2T = 16 zeros (1 and its own direction of each row)" routes branch_ln 16
check "peri-LN, rms of unit rows: 'structure'; T = 8 zeros (its own direction of each row)" routes branch_rms 8

check "kappa(B): one head's from the two SVDs, several heads' built on the exact path, Lanczos off it; skipped as 'structure' off the exact path exactly where G*d_h < d or a branch norm that centres or cuts rows to unit norm, null there (not one head's kappa(W_VO) kappa(A), nor a premise ratio)" says '
assert d["branch_ln_exact"]["conditioning"]["kappa_dominant_route"] == ["exact"] * 2
for name in ("narrow", "wide"):
    assert d[name + "_exact"]["conditioning"]["kappa_dominant_route"] == ["exact"] * 2
# G*d_h = 8 < 16 (narrow: H*d_h = 8; grouped: 4 groups of 2) and the ln branch norm: B singular.
for name in ("narrow", "grouped", "branch_ln", "branch_rms"):
    k = d[name + "_free"]["conditioning"]
    assert k["kappa_dominant_route"] == ["structure"] * 2, (name, k["kappa_dominant_route"])
    assert k["kappa_dominant"] == [None] * 2 and k["premise_ratio"] == [None] * 2, (name, k["kappa_dominant"], k["premise_ratio"])
assert d["wide_free"]["conditioning"]["kappa_dominant_route"] == ["lanczos"] * 2' \
    narrow_exact wide_exact branch_ln_exact narrow_free wide_free grouped_free branch_ln_free \
    branch_rms_free

check "one head: kappa(B) = kappa(W_VO) kappa(A), route kronecker; gap deflate: K not taken, route null" \
    batch_document "$tmp/one" --conditioning -T 8 -d 8 -L 2 -g deflate
check "  the routes say so" says '
k = d["one"]["conditioning"]
assert k["kappa_dominant_route"] == ["kronecker"] * 2, k["kappa_dominant_route"]
assert k["jacobian_s_min_route"] == [None] * 2 and k["jacobian_s_min"] == [None] * 2
assert k["counterpart_jacobian_s_min_route"] == ["exact"] * 2, k["counterpart_jacobian_s_min_route"]' one

finish
