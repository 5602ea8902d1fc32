#!/bin/bash
# --head-dim: heads whose width d_h does not split d (H·d_h ≠ d, as in Gemma 2/3, Qwen3-0.6B,
# Mistral Nemo, gpt-oss).  What cannot exist at such a shape is refused with exit 2 and a
# message naming the option and what is accepted; --head-dim d/H is the unset run bit for bit
# but for the key that records it; the drawn matrices have the shapes and the fan-in/fan-out
# stds docs/model.md §1.10 gives; an export at such a shape reads back to the same numbers.
# (numpy's own forward of such a checkpoint: tests/cli/hf-forward.sh.)
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused() { # message -- args...
    local message=$1
    shift 2
    "$BIN" --batch "$@" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && grep -qF -- "$message" "$tmp/err" && [ ! -s "$tmp/out" ] ||
        { echo "  $*: exit $status: $(head -c 300 "$tmp/err")"; return 1; }
}
W="-T 8 -d 40 -L 2"
check "--wo identity (the default) at H·d_h ≠ d: refused, saying there is no identity" refused \
    "--wo identity: accepted only where H·d_h = d, not with --heads 2 of --head-dim 16 (H·d_h = 32, d = 40" -- \
    $W --heads 2 --head-dim 16
check "an odd d_h with rotary positions: refused, naming --rope" refused \
    "--head-dim 13: accepted an even width with --rope half" -- $W --heads 4 --head-dim 13 --wo gaussian --rope half
check "--init mimetic at H·d_h ≠ d: refused" refused \
    "--init mimetic: accepted only where H·d_h = d" -- $W --heads 2 --head-dim 16 --wo gaussian --init mimetic
check "--init-query identity at H·d_h ≠ d: refused, naming the matrix's shape" refused \
    "--init-query identity: accepted only where H·d_h = d, not with --heads 2 of --head-dim 16 (the matrix is 40×32" -- \
    $W --heads 2 --head-dim 16 --wo gaussian --init-query identity
check "H·d_h above 4096: refused, naming the most d_h can be" refused \
    "--head-dim 40: accepted H·d_h <= 4096, not 4160 with --heads 104 (choose at most 39)" -- \
    $W --heads 104 --head-dim 40 --wo gaussian
check "d_h above d: refused" refused "--head-dim 41: accepted 0..40 (d_h <= -d/--width 40; 0: d/H)" -- $W --heads 2 --head-dim 41 --wo gaussian
check "--heads not dividing d without --head-dim: refused, naming --head-dim" refused \
    "--heads 3: accepted a divisor of -d/--width 40 (each head has width d/H), or any H with --head-dim" -- \
    $W --heads 3

# --head-dim d/H is the unset run: the same document but for "head_dim".
same_as_unset() {
    batch_document "$tmp/unset" $W --heads 4 --kv-heads 2 --wo gaussian --qk-norm head --rope half &&
        batch_document "$tmp/set" $W --heads 4 --kv-heads 2 --wo gaussian --qk-norm head --rope half --head-dim 10 &&
        grep -qF '"head_dim":0' "$tmp/unset.json" && grep -qF '"head_dim":10' "$tmp/set.json" &&
        sed 's/"head_dim":10/"head_dim":0/' "$tmp/set.json" | cmp -s - "$tmp/unset.json"
}
check "--head-dim d/H: the unset run bit for bit (but for head_dim)" same_as_unset

if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    skip "the drawn matrices' shapes and stds" "Debian's python3-numpy is not installed"
    skip "an export at H·d_h ≠ d reads back to its numbers" "Debian's python3-numpy is not installed"
    finish
    exit
fi

# The export's tensors: q_proj (H·d_h, d), k_proj and v_proj (G·d_h, d), o_proj (d, H·d_h),
# with the stds of their fan-in and fan-out: normal's W^O 1/√(H·d_h), xavier's W^Q
# √(2/(d + H·d_h)).  A sample variance of n entries has relative std √(2/n): the bound is 6 of
# those (n = 8192 here: 0.094), where the wrong fan (d = 64 for H·d_h = 128) is off by 2×.
stds() { # init what-to-check
    "$BIN" --batch -T 8 -d 64 -L 1 --heads 4 --kv-heads 2 --head-dim 32 --wo gaussian \
        --init "$1" --export-weights "$tmp/$1" >/dev/null 2>&1 &&
        /usr/bin/python3 - "$tmp/$1/model.safetensors" "$1" <<'PY'
import math, sys
sys.path.insert(0, "tests/cli")
import numpy as np
from safetensors_tool import read
d, inner, kv = 64, 128, 64
tensors = {n: (shape, np.frombuffer(raw, "<f8")) for n, _, shape, raw in read(sys.argv[1])[0]}
p = "model.layers.0.self_attn."
shapes = {"q_proj": [inner, d], "k_proj": [kv, d], "v_proj": [kv, d], "o_proj": [d, inner]}
if any(tensors[p + n + ".weight"][0] != s for n, s in shapes.items()):
    print({n: tensors[p + n + ".weight"][0] for n in shapes})
    sys.exit(1)
want = {"normal": ("o_proj", 1 / inner), "xavier": ("q_proj", 2 / (d + inner))}[sys.argv[2]]
x = tensors[p + want[0] + ".weight"][1]
ratio = np.mean(x ** 2) / want[1]
print("%s %s: variance / expected = %.4f" % (sys.argv[2], want[0], ratio))
sys.exit(0 if abs(ratio - 1) <= 6 * math.sqrt(2 / x.size) else 1)
PY
}
check "normal: the tensors' shapes, W^O's variance 1/(H·d_h)" stds normal
check "xavier: W^Q's variance 2/(d + H·d_h)" stds xavier

# An export at H·d_h ≠ d (H·d_h = 48 > d = 40, grouped, QK-norm, RoPE, an MLP) read back with
# --weights: every per-layer number the same.
round_trip() {
    local S="-T 12 -d 40 -L 3 --heads 4 --kv-heads 2 --head-dim 12 --wo gaussian --qk-norm head --rope half -m causal --mlp swiglu --mlp-hidden 24 --skip plain"
    # shellcheck disable=SC2086
    batch_document "$tmp/drawn" $S --export-weights "$tmp/ck" && batch_document "$tmp/read" $S --weights "$tmp/ck" &&
        grep -qF '"head_dim": 12' "$tmp/ck/config.json" &&
        /usr/bin/python3 - "$tmp/drawn.json" "$tmp/read.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ["stable_rank", "token_rms", "token_cosine_mean", "centred_stable_rank", "logit_std"]
sys.exit(0 if all(a[k] == b[k] for k in keys) and a["eigenvalues"] == b["eigenvalues"] else 1)
PY
}
check "an export at H·d_h = 48, d = 40 reads back to the same numbers" round_trip
finish
