#!/bin/bash
# bench/numpy_ref.py --same-as-batch computes what `attnscope --batch` prints: numpy writes its
# X0 and weights as a checkpoint (X0's rows as the embedding table, ids 0 … T−1), attnscope
# reads it with --weights and --token-ids, and every number numpy prints equals attnscope's to
# 1e-9 relative (tests/cli/numpy_ref_compare.py derives the tolerance; what a checkpoint
# withdraws is compared with a drawn run's and the phase's formula).  A number perturbed by
# 1e-7 must fail the comparison, and so must a documented field missing from numpy's document;
# bad flags are refused with exit 2.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
ref=bench/numpy_ref.py
compare=tests/cli/numpy_ref_compare.py

skip_script_without_numpy "numpy_ref --same-as-batch against attnscope"

same_numbers() { # T d seed gap [depth, default 3]
    local dir=$tmp/$1-$2-$3-$4-${5:-3} flags=(-T "$1" -d "$2" -L "${5:-3}" --seed "$3" -g "$4")
    mkdir "$dir" &&
        /usr/bin/python3 $ref --same-as-batch "${flags[@]}" --write-checkpoint "$dir/ck" >"$dir/numpy.json" &&
        batch_document "$dir/read" "${flags[@]}" --weights "$dir/ck" --token-ids "$dir/ck/ids.txt" &&
        batch_document "$dir/drawn" "${flags[@]}" &&
        /usr/bin/python3 $compare "$dir/numpy.json" "$dir/read.json" "$dir/drawn.json" "$dir/ck"
}
for T in 16 32 48; do
    for seed in 1 2; do
        check "T = d = $T, seed $seed, gap off: every number numpy computes is attnscope's" same_numbers $T $T $seed off
    done
done
check "T = d = 32, seed 3, gap center: the same" same_numbers 32 32 3 center
check "T = 24 < d = 40, seed 1: the same" same_numbers 24 40 1 off
# L = 8: the gap-off network's tokens merge (relative_spread 1e-12 at layer 5, round-off from
# layer 6) and its logits reach 1e11: what one layer's rounding leaves undetermined is each
# number's derived floor there (numpy_ref_compare.py, Rounding), and token_similarity is null
# by docs/model.md's rule in both programs; so are the rows at layer 8, whose own rounding
# bound (attention_entropy_rounding, 78 where δ = 1.9, computed by each program) passes half
# their value.
check "T = d = 64, L = 8, seed 1, gap off (collapsed layers): the same within the derived floors" \
    same_numbers 64 64 1 off 8
check "T = d = 64, L = 8, seed 2, gap center: the same" same_numbers 64 64 2 center 8
# Above T·d·min(T, d) = 64³ attnscope's ‖W^Q W^Kᵀ‖₂ and ‖X‖₂ are proved upper bounds, within
# ~1e-10 of the exact ones at d ≤ 256 (docs/model.md §3), inside RTOL.
check "T = d = 256, L = 8, seed 1, gap off (above 64³): the same" same_numbers 256 256 1 off 8

# The comparison can fail: one number of numpy's, perturbed by 1e-7 relative, in turn.
perturbed_fails() { # path [document's directory]
    local dir=${2:-$tmp/32-32-1-off-3}
    /usr/bin/python3 $compare "$dir/numpy.json" "$dir/read.json" "$dir/drawn.json" "$dir/ck" --perturb "$1" >"$tmp/out"
    [ $? -eq 1 ] && grep -qF "${1%%[*}" "$tmp/out"
}
for path in stable_rank_minus_one[2] counterpart_gradient_norm[0] token_rms[3] attention_entropy_rounding[2] \
    centred_stable_rank[1] attention_entropy.min[3] counterpart_attention_entropy_zhai_bound[1] \
    attention_phase_critical_beta[2] attention_entropy_theory.mean readouts.s1_over_s2 \
    singular_values[5] shown_attention_entropy.rows[7] logit_std; do
    check "numpy's $path perturbed by 1e-7: the comparison fails" perturbed_fails "$path"
done
# and at L = 8 the floors leave the layers before the tokens merge as tight
for path in relative_spread[3] attention_entropy.mean[2] counterpart_max_attention_mean[3]; do
    check "L = 8: numpy's $path perturbed by 1e-7: the comparison fails" perturbed_fails "$path" \
        "$tmp/64-64-1-off-8"
done

# Every documented field is there: one dropped from numpy's document, in turn, fails.
dropped_fails() { # path
    local dir=$tmp/32-32-1-off-3
    /usr/bin/python3 $compare "$dir/numpy.json" "$dir/read.json" "$dir/drawn.json" "$dir/ck" --drop "$1" >"$tmp/out"
    [ $? -eq 1 ] && grep -qF "${1%%[*}" "$tmp/out"
}
for path in token_similarity counterpart_relative_spread attention_entropy.min_head_average \
    readouts.s1_over_s2 attention_entropy_theory.layer singular_values[3]; do
    check "numpy's $path dropped: the comparison fails" dropped_fails "$path"
done

no_checkpoint_refused() {
    local dir=$tmp/32-32-1-off-3
    /usr/bin/python3 $compare "$dir/numpy.json" "$dir/read.json" "$dir/drawn.json" "$tmp/none" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -qF "$tmp/none: not numpy_ref's checkpoint" "$tmp/err"
}
check "the comparison without numpy's checkpoint: exit 2, naming the directory" no_checkpoint_refused

refused() { refused_running /usr/bin/python3 "$ref" -- "$@"; } # message -- args...
check "--same-as-batch with markov: refused, naming what is accepted" refused \
    "--same-as-batch: -a/--attention markov: accepted softmax only" -- --same-as-batch -a markov -T 16 -d 16
check "--write-checkpoint without --same-as-batch: refused" refused \
    "--write-checkpoint: accepted only with --same-as-batch" -- --write-checkpoint "$tmp/x" -T 16 -d 16
finish
