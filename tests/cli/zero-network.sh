#!/bin/bash
# A network that is exactly 0 says so under every gap mode (docs/model.md §1.4, §2): uniform
# attention whose rows see every key is U = (1/T)11ᵀ, so removing its outlier (outliers) or
# deflating it leaves 0 in exact arithmetic, as center does.  Each such document must read as
# center's: the stable rank, norm and similarity null after layer 1, gradients 0, and the
# warning "exactly 0 after layer 1", not rounding residue reported as a network; so must
# softmax whose queries or keys are drawn 0 (its logits are 0: uniform rows).  Identity
# attention has no outlier (every singular value 1): gap outliers removes nothing, says so,
# and the network is the gap-off one bit for bit.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

# The zero network's numbers, held to center's (whose zero the arithmetic itself gives).
zero_as_center() { # name center-name
    says '
a, c = d[sys.argv[2]], d[sys.argv[3]]
for key in ("stable_rank", "log10_norm", "token_similarity", "gradient_norm"):
    assert a[key] == c[key], (key, a[key], c[key])
assert all(v is None for v in a["stable_rank"][1:]), a["stable_rank"]
assert all(v is None for v in a["log10_norm"][1:]), a["log10_norm"]
assert all(v == 0 for v in a["gradient_norm"]), a["gradient_norm"]
assert warned(sys.argv[2], "network is exactly 0 after layer 1 (uniform)"), a["warnings"]' "$1" "$2"
}

for size in "16 16 3" "32 64 4" "8 8 2"; do
    read -r T d L <<<"$size"
    args=(-T "$T" -d "$d" -L "$L" -a uniform)
    check "uniform, T=$T d=$d L=$L, gap center: runs" batch_document "$tmp/center$T" "${args[@]}" -g center
    for gap in outliers deflate; do
        check "  gap $gap: runs" batch_document "$tmp/$gap$T" "${args[@]}" -g $gap
        check "  gap $gap: exactly 0 after layer 1, null as center, the warning" \
            zero_as_center "$gap$T" "center$T"
    done
    check "  gap outliers removed the one outlier of U (r = 1)" says '
assert d[sys.argv[2]]["outliers_removed"] == 1, d[sys.argv[2]]["outliers_removed"]' "outliers$T"
done
check "a window that covers every key (w = T - 1) is the full mask: zero too" \
    batch_document "$tmp/wide" -T 16 -d 16 -L 3 -a uniform -g outliers -m window -w 15
check "  null as center, the warning" zero_as_center wide center16
check "a causal mask keeps uniform rows of different lengths (full rank): not zero, no warning" \
    batch_document "$tmp/causal" -T 16 -d 16 -L 3 -a uniform -g outliers -m causal
check "  finite stable ranks, no zero-network warning" says '
a = d["causal"]
assert all(v is not None and v >= 1 for v in a["stable_rank"]), a["stable_rank"]
assert not warned("causal", "exactly 0"), a["warnings"]' causal

# Softmax whose W^Q or W^K is drawn 0 (mup's queries, a per-matrix zero) has logits exactly 0
# at every layer: its rows are uniform too, and the same proof holds.
for zero in "--init mup" "--init-key zero"; do
    read -r -a args <<<"$zero"
    name=${zero//[^a-z]/}
    check "softmax $zero, gap center: runs" batch_document "$tmp/center$name" -T 16 -d 16 -L 3 "${args[@]}" -g center
    for gap in outliers deflate; do
        check "  gap $gap: runs" batch_document "$tmp/$gap$name" -T 16 -d 16 -L 3 "${args[@]}" -g $gap
        check "  gap $gap: exactly 0 after layer 1, null as center, the warning" says "
a, c = d['$gap$name'], d['center$name']
for key in ('stable_rank', 'log10_norm', 'token_similarity', 'gradient_norm'):
    assert a[key] == c[key], (key, a[key], c[key])
assert all(v is None for v in a['stable_rank'][1:]), a['stable_rank']
assert warned('$gap$name', 'network is exactly 0 after layer 1 (softmax)'), a['warnings']" "$gap$name" "center$name"
    done
done
check "softmax with a sink and zero queries: rows sum below 1, no proof, no warning" \
    batch_document "$tmp/sink" -T 16 -d 16 -L 3 --init mup --sink 0 -g outliers
check "  not reported as exactly 0" says '
assert not warned("sink", "exactly 0"), d["sink"]["warnings"]' sink

check "identity, gap outliers: runs" batch_document "$tmp/id_out" -T 16 -d 16 -L 3 -a identity -g outliers
check "identity, gap off: runs" batch_document "$tmp/id_off" -T 16 -d 16 -L 3 -a identity -g off
check "  no outlier removed, the warning says why, the network is gap off's bit for bit" says '
a, b = d["id_out"], d["id_off"]
assert a["outliers_removed"] == 0, a["outliers_removed"]
assert warned("id_out", "identity attention has no outlier"), a["warnings"]
for key in ("stable_rank", "log10_norm", "gradient_norm", "token_similarity"):
    assert a[key] == b[key], (key, a[key], b[key])' id_out id_off
finish
