#!/bin/bash
# Theory where it applies, silence where it doesn't (docs/model.md §3, the table "What the
# block's settings do to the theory"): for pre-LN, the residual gains, the initialisation
# schemes, the input norm and the logit scale, each prediction in the JSON document is
# null where the setting voids it, with a warning that says why, and stays where it still
# holds, with no warning.  Facts are read off the measured numbers where they decide
# (a Gaussian scheme's stable ranks equal the normal scheme's: the stable rank is free of scale;
# orthogonal values keep the input's stable rank under identity attention).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

runs() { valid_document "$1" 32 3 -T 32 -d 32 -L 3 "${@:2}"; } # name args...: exit 0 and a valid document

check "pre-LN, PyTorch LN: runs" runs preln_torch --ln-place pre -n ln --ln-scale sqrt-d
check "pre-LN, PyTorch LN: the first layer reads rows of norm sqrt(d): no sigma, circle or quartercircle, a warning" says '
t = d["preln_torch"]["theory"]
assert t["sigma"] is None and t["circle_radius"] is None and t["singular_edge"] is None, t
assert t["singular_law"] is None and t["outlier"] == 1, t
assert warned("preln_torch", "pre-LN: the first layer")' preln_torch
check "the logits the first layer saw are d times larger: the measured logit std says so" says '
std = d["preln_torch"]["logit_std"]
assert 0.5 * 32 < std < 2 * 32, std' preln_torch
# sigma_qk = 0.5 keeps sigma for the sqrt(d) rows finite (e^{(0.25 d)^2} at d = 32).
check "pre-LN with a unit-row input norm: runs" runs preln_input --ln-place pre -n rms --input-norm sqrt-d -s 0.5
check "  LN(X0) has unit rows while sigma is for sqrt(d) rows: null, a warning" says '
assert d["preln_input"]["theory"]["sigma"] is None
assert warned("preln_input", "pre-LN")' preln_input
check "post-LN, PyTorch LN: runs" runs postln_torch --ln-place post -n ln --ln-scale sqrt-d
check "  the first layer reads X0: sigma and the laws stay, no pre-LN warning" says '
t = d["postln_torch"]["theory"]
assert t["sigma"] is not None and t["singular_edge"] is not None, t
assert not warned("postln_torch", "pre-LN")' postln_torch
check "pre-LN with unit rms rows: runs" runs preln_unit --ln-place pre -n rms
check "  LN(X0) = X0: sigma and the laws stay, with the same values as post-LN" says '
a, b = d["preln_unit"], d["postln_torch"]
assert a["theory"]["sigma"] == b["theory"]["sigma"] and a["theory"]["singular_edge"] == b["theory"]["singular_edge"]
assert a["logit_std"] == b["logit_std"], (a["logit_std"], b["logit_std"])
assert not warned("preln_unit", "pre-LN")' preln_unit postln_torch

check "orthogonal init, softmax: runs" runs ortho --init orthogonal
check "  no quartercircle law (logits of orthonormal frames), the circle stays, a warning for each" says '
t = d["ortho"]["theory"]
assert t["singular_edge"] is None and t["singular_law"] is None and t["circle_radius"] is not None, t
assert t["stable_rank"] is None, t
assert warned("ortho", "no quartercircle law") and warned("ortho", "orthogonal W^V")' ortho
check "  at T = d the singular values of A-perp are all equal, as the warning says" says '
s = sorted(d["ortho"]["singular_values"], reverse=True)[1:-1]
assert max(s) / min(s) < 1.1, (max(s), min(s))' ortho
check "orthogonal init, identity attention: runs" runs ortho_identity --init orthogonal -a identity
check "  the values keep the Gram: the stable rank stays T, no theory curve, a warning" says '
sr = d["ortho_identity"]["stable_rank"]
assert all(abs(x - 32) < 1e-6 for x in sr), sr
assert d["ortho_identity"]["theory"]["stable_rank"] is None
assert warned("ortho_identity", "orthogonal W^V keep")' ortho_identity
markov_inits() { runs markov -a markov && runs xavier -a markov --init xavier && runs gpt2 -a markov --init gpt2; }
check "normal and xavier init, markov attention: run" markov_inits
check "  a Gaussian scheme keeps the theory curve (sr is free of scale), the same curve, no warning" says '
for n in ("xavier", "gpt2"):
    assert d[n]["theory"]["stable_rank"] == d["markov"]["theory"]["stable_rank"] is not None, n
    assert d[n]["warnings"] == d["markov"]["warnings"], d[n]["warnings"]
    for a, b in zip(d[n]["stable_rank"], d["markov"]["stable_rank"]):
        assert abs(a - b) <= 1e-9 * b, (n, a, b)' markov xavier gpt2

# Markov attention ignores the tokens, so without a skip b only scales every layer.
check "branch gain 0.5, no skip, markov: runs" runs branch -a markov --branch-gain 0.5
check "  gradients null with a warning" says '
assert all(g is None for g in d["branch"]["gradient_norm"])
assert warned("branch", "branch gain b = 0.5")' branch
check "  the network of b = 1 up to scale: equal stable ranks and the same theory curve; b = 1 has gradients" says '
a, b = d["branch"], d["markov"]
for x, y in zip(a["stable_rank"], b["stable_rank"]):
    assert abs(x - y) <= 1e-9 * y, (x, y)
assert a["theory"]["stable_rank"] == b["theory"]["stable_rank"] is not None
assert all(g is not None for g in b["gradient_norm"])
assert not warned("markov", "branch gain")' branch markov
check "skip gain 2 with a plain skip: runs" runs skipgain -k plain --skip-gain 2
check "  no warning about it: the skip already has no curve and no gradients (its note says so)" says '
assert not any("gain" in w for w in d["skipgain"]["warnings"]), d["skipgain"]["warnings"]
assert d["skipgain"]["theory"]["note"]' skipgain

check "input norm sqrt(d), markov: runs" runs input_markov -a markov --input-norm sqrt-d
check "  markov ignores the tokens: sigma, the laws and the curve stay, no warning" says '
a, b = d["input_markov"], d["markov"]
assert a["theory"] == b["theory"], (a["theory"], b["theory"])
assert a["warnings"] == b["warnings"]' input_markov markov
check "logit scale linear, softmax: runs" runs linear_scale --logit-scale linear
check "  sigma for logits of std sigma_qk^2/sqrt(d_h), the measured std agrees; no warning" says '
t = d["linear_scale"]["theory"]
expected = math.sqrt(math.expm1(1 / 32))
assert abs(t["sigma"] - expected) < 1e-12 * expected, t["sigma"]
std = d["linear_scale"]["logit_std"]
assert abs(std - 1 / math.sqrt(32)) < 0.15 / math.sqrt(32), std
assert d["linear_scale"]["warnings"] == [], d["linear_scale"]["warnings"]' linear_scale
check "input norm sqrt(d), softmax, sigma_qk = 1: runs (sigma overflows)" runs input_overflow --input-norm sqrt-d
check "  sigma = sqrt(exp(d^2) - 1) is beyond double: null, with the warning that says so" says '
doc = d["input_overflow"]
assert doc["sigma"] is None and doc["theory"]["sigma"] is None, (doc["sigma"], doc["theory"])
assert 32.0 ** 2 > math.log(sys.float_info.max)
assert warned("input_overflow", "sigma overflows the double range")' input_overflow
finish
