#!/bin/bash
# Nothing round-off-driven is printed as a number (docs/model.md §2, "Round-off from a layer
# on").  The thread count of OpenBLAS changes only the order of its sums: each configuration's
# document computed on 1 thread and on 2 must agree in every number either prints, to 1e-6 of
# its scale (tests/cli/threads_compare.py derives it), and print null at the same places.
# Then the rule itself at the default settings, where both networks' tokens are equal within
# round-off from layer 7: the gap-removed network (no skip) is null from layer 8 on with its
# gradients, the gap-kept one keeps its norms and gradients, the warning names both layers;
# at -L 7 the gradients stay (A_8 is not in their product); a skip keeps the network; tokens
# equal in X0 already are said to be so from layer 0.  And the rows' rounding bounds' rule on
# the attention rows (below).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

threads_agree() { # name args...: documents on 1 and 2 OpenBLAS threads agree
    local name=$1
    shift
    OPENBLAS_NUM_THREADS=1 batch_document "$tmp/$name-1" "$@" &&
        OPENBLAS_NUM_THREADS=2 batch_document "$tmp/$name-2" "$@" &&
        "$PY" tests/cli/threads_compare.py "$tmp/$name-1.json" "$tmp/$name-2.json" >"$tmp/$name.txt"
    local status=$?
    grep -v '^skipped' "$tmp/$name.txt" | head -n 8
    return $status
}

for one in "default:" "center:-g center" "markov-center:-a markov -g center" \
    "causal:-m causal" "window:-m window" "seeds:--seeds 3"; do
    read -r -a args <<<"${one#*:}"
    check "${one%%:*}: every number agrees on 1 and 2 OpenBLAS threads" threads_agree "${one%%:*}" "${args[@]}"
done
# The logits' rounding (docs/model.md §2): without LayerNorm the tokens' norms grow ~16-fold
# a layer, and each logit's rounding bound δ with their square.  The rows' own bound
# (attention_entropy_rounding for the mean entropy) nulls each row statistic where it reaches
# half the value (1e-6 near 0), layer by layer, with one warning per network; below it they
# are printed, and threads_compare.py holds them to their bounds.  Rows one-hot far beyond δ
# keep their digits where δ itself is large: the window mask's gap-removed counterpart at
# layer 5 (δ 1.4, above the ln 2/4 of the factor bound, rows of entropy 0 bounded by 3e-11).
check "window mask: rows null where their own bound reaches half the value, one-hot rows printed at delta >= ln 2/4" says '
doc = d["window-1"]
for p, role, first, printed_over in (("", "the", 5, []), ("counterpart_", "the counterpart", 6, [5])):
    delta, bound = doc[p + "attention_logit_rounding"], doc[p + "attention_entropy_rounding"]
    assert delta[0] is None and all(v is not None and v > 0 for v in delta[1:]), delta
    for l in range(1, 9):
        null = l >= first
        for key in ("max_attention_mean", "max_attention_mean_head_average"):
            assert (doc[p + key][l] is None) == null, (p, key, l)
        for key, values in doc[p + "attention_entropy"].items():
            assert (values[l] is None) == null, (p, key, l)
        mean = doc[p + "attention_entropy"]["mean"][l]
        assert null or bound[l] < max(mean / 2, 1e-6), (p, l, bound[l], mean)
        assert not null or bound[l] is None or bound[l] > 1e-6, (p, l, bound[l])
    for l in printed_over:
        assert delta[l] >= math.log(2) / 4 and bound[l] < 1e-10, (p, l, delta[l], bound[l])
    warned = [w for w in doc["warnings"] if w.startswith("attention rows of %s network: from layer %d " % (role, first))]
    assert len(warned) == 1, doc["warnings"]
    assert ("%.3g" % delta[first]) in warned[0], (warned, delta[first])' window-1
check "default settings: layer 5's rows printed (bound 2e-4 and 5e-3 on entropies of 5.3, 3.2), layer 6's null (bound 1e3, 5e5)" says '
doc = d["default-1"]
for p in ("", "counterpart_"):
    delta, bound = doc[p + "attention_logit_rounding"], doc[p + "attention_entropy_rounding"]
    mean = doc[p + "attention_entropy"]["mean"]
    assert 1e-3 < delta[5] < math.log(2) / 4 <= delta[6], delta
    assert 1e-5 < bound[5] < 1e-2 and mean[5] > 1, (bound, mean)
    assert doc[p + "max_attention_mean"][5] is not None and mean[5] is not None
    assert bound[6] > 100 and doc[p + "max_attention_mean"][6] is None and mean[6] is None' default-1
check "markov: its logits are drawn, not computed: delta 0 at every layer" says '
doc = d["markov-center-1"]
assert doc["attention_logit_rounding"][1:] == [0] * 8, doc["attention_logit_rounding"]' markov-center-1

# One vocabulary row: X0's tokens are one token, equal from layer 0 (its sr − 1 is null there):
# the warning says layer 0, the rows from layer 1, for both networks (main said layer 1, and
# nothing of the counterpart, which vanished at layer 1).
check "--vocab 1: runs" batch_document "$tmp/vocab1" --input embedding --vocab 1 -T 32 -d 32 -L 3
check "--vocab 1: equal from layer 0, said so of both networks" says '
doc = d["vocab1"]
for p, role in (("", "the"), ("counterpart_", "the counterpart")):
    assert doc[p + "stable_rank_minus_one"][0] is None and doc[p + "relative_spread"][0] is None
    warned = [w for w in doc["warnings"] if w.startswith("token similarity of %s network:" % role)]
    assert len(warned) == 1, (role, doc["warnings"])
    assert "from layer 0 on its tokens are equal" in warned[0], warned
    assert "from layer 1 the attention rows" in warned[0], warned' vocab1

# -g deflate at T = d = 128 (where OpenBLAS splits its products between the threads): from
# layer 6 the network's tokens are ±v, apart (relative spread 0.3) and of one direction within
# round-off (energy off it 1e-32, sr − 1 1e-64, both moving 3x with the thread count on main):
# null there, in both documents, sr 1; layer 5's (6e-20, 4e-39) printed, and agreeing.
deflate_agrees() {
    for t in 1 2; do
        OPENBLAS_NUM_THREADS=$t batch_document "$tmp/deflate-$t" -g deflate -T 128 -d 128 -L 12 || return 1
    done
}
check "-g deflate, T = d = 128, L = 12: runs on 1 and 2 threads" deflate_agrees
check "  tokens of one direction within round-off: sr - 1 and the energy off it null, said once" says '
for n in ("deflate-1", "deflate-2"):
    doc = d[n]
    for l in range(13):
        one_direction = l >= 6
        assert (doc["energy_off_top"][l] is None) == one_direction, (n, l, doc["energy_off_top"])
        assert (doc["stable_rank_minus_one"][l] is None) == one_direction, (n, l)
        assert doc["relative_spread"][l] > 0.1 and doc["stable_rank"][l] is not None
    assert doc["stable_rank"][6:] == [1] * 7, doc["stable_rank"]
    warned = [w for w in doc["warnings"] if w.startswith("stable rank of the network: from layer 6 its tokens lie along one direction")]
    assert len(warned) == 1, doc["warnings"]
a, b = d["deflate-1"], d["deflate-2"]
for key in ("energy_off_top", "stable_rank_minus_one"):
    assert abs(a[key][5] - b[key][5]) <= 1e-6 * abs(a[key][5]), (key, a[key][5], b[key][5])' deflate-1 deflate-2

check "-L 7: runs" batch_document "$tmp/L7" -L 7
check "--skip plain (its counterpart gap center): runs" batch_document "$tmp/skip" --skip plain
check "default: gap-removed network null from layer 8 with every gradient, the gap kept measured" says '
doc = d["default-1"]
assert doc["counterpart_gap"] == "center"
for key in ("stable_rank", "log10_norm", "token_rms", "stable_rank_mean"):
    assert doc["counterpart_" + key][8] is None, key
    assert doc["counterpart_" + key][7] is not None and doc[key][8] is not None, key
assert all(g is None for g in doc["counterpart_gradient_norm"]), doc["counterpart_gradient_norm"]
assert all(g is not None and g > 0 for g in doc["gradient_norm"][1:]), doc["gradient_norm"]
# equal tokens from layer 7 in both: what reads their differences is null, sr is 1
for p in ("", "counterpart_"):
    for key in ("stable_rank_minus_one", "token_similarity", "relative_spread", "energy_off_top"):
        assert doc[p + key][7] is None and doc[p + key][6] is not None, (p, key)
    assert doc[p + "stable_rank"][7] == 1
    assert doc[p + "max_attention_mean"][8] is None
    # the similarity warning says "not shown there" from layer 7: no layer after it either
    assert doc[p + "token_similarity"][8] is None, (p, doc[p + "token_similarity"])
warned = [w for w in doc["warnings"] if "counterpart network: from layer 7" in w]
assert len(warned) == 1 and "from layer 8 on is null" in warned[0], doc["warnings"]
assert not any("the network: from layer 7" in w and "on is null" in w for w in doc["warnings"])' default-1
check "-L 7: the gap-removed gradients stay (no layer past the equal tokens in the product)" says '
doc = d["L7"]
assert all(g is not None and g > 0 for g in doc["counterpart_gradient_norm"][1:]), doc
assert all(v is not None for v in doc["counterpart_log10_norm"]), doc["counterpart_log10_norm"]' L7
check "a skip carries the tokens past the branch: nothing of the network is null for noise" says '
doc = d["skip"]
assert not any("on is null" in w for w in doc["warnings"]), doc["warnings"]
assert all(v is not None for v in doc["counterpart_log10_norm"]), doc["counterpart_log10_norm"]' skip
finish
