#!/bin/bash
# Attention entropy in the --batch document (docs/model.md §2), exactly: uniform attention
# gives H_i = ln n_i (full: ln T; causal row i, 1-based: ln i, a mean of ln(T!)/T) to 1e-12,
# identity 0, softmax with sigma_qk near 0 ln T; a gap-removed network reports the entropy of
# the A it removes the gap from (layer 1: the counterpart's, bit for bit); relu, sigmoid and
# linear rows are no distributions: null, exit 0, and a warning that names the kind.  And
# the random-energy prediction of the first layer's mean, where it holds, null elsewhere.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

runs() { valid_document "$1" "$2" "$3" -T "$2" -d "$2" -L "$3" "${@:4}"; } # name T depth args...: exit 0 and a valid document

says() { # name script: Python over the document (doc, e = doc["attention_entropy"]), asserting
    "$PY" - "$tmp/$1.json" <<PY
import json, math, sys
doc = json.load(open(sys.argv[1]))
e, ce = doc["attention_entropy"], doc["counterpart_attention_entropy"]
T, L = doc["config"]["T"], doc["config"]["depth"]
def close(got, want, tol):
    assert got is not None and abs(got - want) <= tol, (got, want, tol)
$2
PY
}

check "uniform, full mask: runs" runs uniform 32 3 -a uniform
check "uniform, full mask: every row's entropy is ln T, normalised 1, max weight 1/T" says uniform '
for l in range(1, L + 1):
    for k in ("mean", "min", "max"):
        close(e[k][l], math.log(T), 1e-12)
    close(e["normalised_mean"][l], 1.0, 1e-12)
    close(doc["max_attention_mean"][l], 1 / T, 1e-15)'

check "uniform, causal: runs" runs causal 24 2 -a uniform -m causal
check "uniform, causal: row i has entropy ln i: min 0, max ln T, mean ln(T!)/T" says causal '
for l in range(1, L + 1):
    close(e["min"][l], 0.0, 0.0)
    close(e["max"][l], math.log(T), 1e-12)
    close(e["mean"][l], sum(math.log(i) for i in range(1, T + 1)) / T, 1e-12)
    close(e["normalised_mean"][l], 1.0, 1e-12)
    close(doc["max_attention_mean"][l], sum(1 / i for i in range(1, T + 1)) / T, 1e-14)'

check "identity: runs" runs identity 16 2 -a identity
check "identity: entropy 0, max weight 1" says identity '
for l in range(1, L + 1):
    assert e["mean"][l] == e["max"][l] == e["normalised_mean"][l] == 0, e
    assert doc["max_attention_mean"][l] == 1'

check "softmax, sigma_qk = 1e-4: runs" runs tiny 48 2 -s 0.0001
check "softmax, sigma_qk = 1e-4: logits of std 1e-8, entropy ln T" says tiny '
for l in range(1, L + 1):
    close(e["mean"][l], math.log(T), 1e-12)
    close(e["min"][l], math.log(T), 1e-12)'

check "gap removed (center): runs" runs center 32 3 -g center -s 1.5
check "gap removed: layer 1 reports the A both networks share, not A - U" says center '
for k in e:
    assert e[k][1] == ce[k][1], (k, e[k][1], ce[k][1])
assert 0 < e["min"][1] <= e["mean"][1] < math.log(T)
assert doc["max_attention_mean"][1] == doc["counterpart_max_attention_mean"][1]'

for kind in relu sigmoid linear; do
    check "$kind: runs" runs "$kind" 16 2 -a "$kind"
    check "$kind: entropy null throughout, a warning names why" says "$kind" "
for group in (e, ce):
    assert all(v is None for values in group.values() for v in values), group
assert doc['max_attention_mean'] == [None] * (L + 1)
assert any(w.startswith('attention entropy is null: $kind rows are not distributions')
           for w in doc['warnings']), doc['warnings']"
done
# The random-energy prediction (docs/model.md §3): attention_entropy_theory against the mean
# of 8 seeds' measured first-layer entropy at T = d = 256, s = sigma_qk^2 = 1.5; the tolerance
# is 4 standard errors of that mean plus the finite-n excess docs/model.md §3 gives there (4.469
# against 4.420: the limit is approached from above).
energy() {
    for seed in 1 2 3 4 5 6 7 8; do
        "$BIN" --batch -T 256 -d 256 -L 1 -s 1.2247448713915890 --seed "$seed" >"$tmp/energy$seed.json" || return 1
    done
    "$PY" - "$tmp" <<'PY'
import json, math, statistics, sys
docs = [json.load(open(f"{sys.argv[1]}/energy{k}.json")) for k in range(1, 9)]
measured = [d["attention_entropy"]["mean"][1] for d in docs]
theory = docs[0]["attention_entropy_theory"]
assert theory["note"] is None and abs(theory["logit_std"] - 1.5) <= 1e-15, theory
assert abs(theory["mean"] - (math.log(256) - 1.5 ** 2 / 2)) <= 1e-14, theory
mean, se = statistics.mean(measured), statistics.stdev(measured) / math.sqrt(8)
tolerance = 4 * se + abs(4.469 - theory["mean"]) + 5e-4
assert abs(mean - theory["mean"]) <= tolerance, (mean, theory["mean"], tolerance)
PY
}
check "random-energy prediction at T = 256, s = 1.5: within 4 standard errors and the finite-n excess" energy

check "sigma_qk above the condensation point: runs" runs condensed 64 1 -s 1.75
check "above s_c = sqrt(2 ln T) the prediction is null, with a note" says condensed '
t = doc["attention_entropy_theory"]
assert t["mean"] is None and t["logit_std"] >= t["critical_logit_std"] and "condense" in t["note"], t'
check "softmax, causal: runs" runs softmax_causal 32 1 -m causal
check "softmax, causal: no prediction, a note names the mask" says softmax_causal '
t = doc["attention_entropy_theory"]
assert t["mean"] is None and "full mask" in t["note"], t'
check "QK-norm per head: runs" runs qk_norm 64 1 --qk-norm head
check "QK-norm: no prediction from sigma_qk, a note names QK-norm" says qk_norm '
t = doc["attention_entropy_theory"]
assert t["mean"] is None and "QK-norm" in t["note"], t'
# The bounds beside the entropies (docs/model.md §3).  Zhai et al.'s never above the measured
# least row entropy, both networks; null with the reason under QK-norm.
check "causal, sigma_qk 0.5, pre-LN: runs" runs bounded 32 4 -m causal -s 0.5 --layernorm ln --ln-place pre --skip plain
check "the Zhai bound lies under the least row entropy at every layer" says bounded '
for net in ("", "counterpart_"):
    bound, least = doc[net + "attention_entropy_zhai_bound"], doc[net + "attention_entropy"]["min"]
    assert bound[0] is None and all(b is not None and b <= m + 1e-12 for b, m in zip(bound[1:], least[1:])), (bound, least)
assert doc["attention_entropy_zhai_bound_note"] is None'
check "QK-norm: the Zhai bound and the phase are null, their notes name QK-norm" says qk_norm '
assert doc["attention_entropy_zhai_bound"] == [None] * 2, doc["attention_entropy_zhai_bound"]
assert "QK-norm" in doc["attention_entropy_zhai_bound_note"]
p = doc["attention_phase"]
assert p["beta"] is None and p["side"] == [None, None] and "QK-norm" in p["note"], p'
# Giorlandino & Goldt's sides on orthonormal tokens (q = 1, p = 0: beta_c = sqrt 2 at layer 1):
# sigma_qk 0.6 is beta = 0.36/sqrt(ln 64) = 0.18, sigma_qk 3 is beta = 4.3.
check "sigma_qk 0.6: runs" runs weak 64 1 -s 0.6
check "sigma_qk 0.6: the rank-collapse side, beta and beta_c stated" says weak '
p = doc["attention_phase"]
assert abs(p["beta"] - 0.36 / math.log(64) ** 0.5) < 1e-12 and p["side"] == [None, "rank-collapse"], p
assert abs(doc["attention_phase_critical_beta"][1] - 2 ** 0.5) < 1e-9, doc["attention_phase_critical_beta"]'
check "sigma_qk 3: runs" runs strong 64 1 -s 3
check "sigma_qk 3: the entropy-collapse side" says strong '
assert doc["attention_phase"]["side"] == [None, "entropy-collapse"], doc["attention_phase"]'
finish
