#!/bin/bash
# Token geometry in the --batch document (docs/model.md §2, "what the stable rank hides"),
# against exact values and identities: orthonormal X0 (layer 0, and every layer of identity
# attention with orthogonal W^V) has cosine 0, energy_off_top 1 - 1/T, relative spread
# sqrt((T-1)/T), centred stable rank T - 1 and RMS norm 1; uniform attention makes the
# tokens equal: centred null with the warning that says 0/0, cosine 1; markov attention is
# linear in X, so scaling the input (--input-norm sqrt-d) leaves all but the RMS unchanged;
# equal row norms (post-RMSNorm, eps 0) tie the cosine to the spread exactly; and in every
# layer of a sweep the bounds e^2/((T-1)(1-e)^2) <= sr - 1 <= (e/(1-e))^2 hold, and the spread
# and RMS agree with token_similarity and log10_norm, which are computed apart.  And the
# warning where sr reads collapsed while the mean token dominates.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

runs() { valid_document "$1" "$2" "$4" -T "$2" -d "$3" -L "$4" "${@:5}"; } # name T d depth args...: exit 0 and a valid document

says() { # name script: Python over the document, asserting
    "$PY" - "$tmp/$1.json" "$tmp" <<PY
import json, math, sys
doc = json.load(open(sys.argv[1]))
T, d, L = doc["config"]["T"], doc["config"]["d"], doc["config"]["depth"]
NETS = ("", "counterpart_")
def close(got, want, tol):
    assert got is not None and abs(got - want) <= tol, (got, want, tol)
def orthonormal(prefix, l):
    close(doc[prefix + "token_cosine_mean"][l], 0, 1e-12)
    close(doc[prefix + "energy_off_top"][l], 1 - 1 / T, 1e-12)
    close(doc[prefix + "relative_spread"][l], math.sqrt((T - 1) / T), 1e-12)
    close(doc[prefix + "centred_stable_rank"][l], T - 1, 1e-12 * T)
    close(doc[prefix + "token_rms"][l], 1, 1e-15)
$2
PY
}

check "orthonormal input: runs" runs x0 32 48 2
check "layer 0 of both networks: cosine 0, 1 - 1/T off the top, centred sr T - 1, RMS norm 1" \
    says x0 'for p in NETS: orthonormal(p, 0)'

check "identity attention, orthogonal W^V: runs" runs rotated 16 24 4 -a identity --init-value orthogonal
check "... every layer keeps orthonormal rows: the same exact values" says rotated '
for p in NETS[:1]:
    for l in range(L + 1): orthonormal(p, l)'

check "uniform attention: runs" runs uniform 16 16 3 -a uniform
check "uniform: equal tokens, what reads their differences null with the 0/0 warning, cosine 1" says uniform '
for l in range(1, L + 1):
    assert doc["centred_stable_rank"][l] is None
    close(doc["token_cosine_mean"][l], 1, 1e-14)
    # round-off (docs/model.md §2): the tokens equal within it
    assert doc["energy_off_top"][l] is None and doc["relative_spread"][l] is None
    # and rank one exactly by the settings (uniform rows over every key): sr 1, sr − 1 0
    assert doc["stable_rank"][l] == 1 and doc["stable_rank_minus_one"][l] == 0
assert any("centred_stable_rank is null (0/0)" in w for w in doc["warnings"]), doc["warnings"]'

check "markov, unit input: runs" runs markov 16 24 4 -a markov
check "markov, input scaled by sqrt(d): runs" runs markov_scaled 16 24 4 -a markov --input-norm sqrt-d
check "scaling X: every quantity but the RMS unchanged, the RMS times sqrt(d)" says markov '
other = json.load(open(sys.argv[2] + "/markov_scaled.json"))
for p in NETS:
    for l in range(L + 1):
        for k in ("centred_stable_rank", "relative_spread"):
            close(other[p + k][l], doc[p + k][l], 1e-12 * abs(doc[p + k][l]))
        # trace - theta on the top-eigenpair route: absolute rounding ~T eps
        close(other[p + "energy_off_top"][l], doc[p + "energy_off_top"][l],
              1e-12 * doc[p + "energy_off_top"][l] + 8 * T * 2.2e-16)
        close(other[p + "token_cosine_mean"][l], doc[p + "token_cosine_mean"][l], 1e-13)
        close(other[p + "token_rms"][l], math.sqrt(d) * doc[p + "token_rms"][l],
              1e-13 * other[p + "token_rms"][l])'

check "post-RMSNorm, PyTorch rows, eps 0: runs" runs rms 16 16 4 -n rms --ln-scale sqrt-d --ln-eps 0
check "equal row norms: cosine = (T(1 - spread^2) - 1)/(T - 1), RMS norm sqrt(d)" says rms '
for p in NETS:
    for l in range(1, L + 1):
        s = doc[p + "relative_spread"][l]
        close(doc[p + "token_cosine_mean"][l], (T * (1 - s * s) - 1) / (T - 1), 1e-13)
        close(doc[p + "token_rms"][l], math.sqrt(d), 1e-14 * math.sqrt(d))'

bounds='
for p in NETS:
    for l in range(L + 1):
        sr, e = doc[p + "stable_rank_minus_one"][l], doc[p + "energy_off_top"][l]
        if sr is None:
            continue
        # e = trace - theta carries ~T eps absolute (top-eigenpair route); sr - 1 1e-9 relative
        low, high = max(e - 8 * T * 2.2e-16, 0), e + 8 * T * 2.2e-16
        assert (low / (1 - low)) ** 2 / (T - 1) * (1 - 1e-9) <= sr, (p, l, sr, e)
        assert sr <= (high / (1 - high)) ** 2 * (1 + 1e-9), (p, l, sr, e)
        s, s0 = doc[p + "relative_spread"][l], doc[p + "relative_spread"][0]
        n, n0 = doc[p + "log10_norm"][l], doc[p + "log10_norm"][0]
        if doc[p + "token_similarity"][l] is not None:
            close(doc[p + "token_similarity"][l], s / s0 * 10 ** (n - n0),
                  1e-11 * doc[p + "token_similarity"][l])
        close(doc[p + "token_rms"][l], 10 ** n / math.sqrt(T), 1e-12 * doc[p + "token_rms"][l])'
for args in "-a softmax" "-a softmax -m causal -g center" "-a markov -g deflate" "-k plain -n ln --ln-place pre --mlp gelu" "-a relu -g uniform"; do
    name=$(echo "$args" | tr -c 'a-z0-9' _)
    check "$args: runs" runs "$name" 16 24 6 $args
    check "$args: sr - 1 within the bounds e^2/((T-1)(1-e)^2) and (e/(1-e))^2; spread and RMS agree with similarity and norm" \
        says "$name" "$bounds"
done

check "softmax at T = 24, d = 32: runs" runs collapse 24 32 3 -a softmax
check "sr < 1.01 with >= 10% off the top and the mean token >= half of s1^2: the warning says so, once per network" says collapse '
warned = [w for w in doc["warnings"] if "(collapsed), yet" in w]
for p, role in zip(NETS, ("the network", "the counterpart network")):
    hits = [l for l in range(1, L + 1)
            if doc[p + "stable_rank_minus_one"][l] < 0.01 and doc[p + "energy_off_top"][l] >= 0.1
            and 1 - doc[p + "relative_spread"][l] ** 2 >= 0.5 * (1 - doc[p + "energy_off_top"][l])]
    mine = [w for w in warned if w.startswith("stable rank of " + role + ":")]
    assert len(mine) == (1 if hits else 0), (p, hits, mine)
    if hits:
        assert "from layer %d " % hits[0] in mine[0], (hits, mine)
assert warned, "the configuration no longer shows the case"'

finish
