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
check "--init mimetic at H·d_h > d: refused, saying the target has only d triplets" refused \
    "--init mimetic: accepted where H·d_h <= d, not with --heads 4 of --head-dim 12 (H·d_h = 48 > d = 40: alpha2 Z2 - beta2 I has only d singular triplets" -- \
    $W --heads 4 --head-dim 12 --wo gaussian --init mimetic
check "--init cutting-skip at H·d_h < d: refused, saying W_VO's rank cannot be d" refused \
    "(H·d_h = 32, d = 40): W^V W^O = W_VO then has rank at most H·d_h < d, and the scheme is W_VO = c^2 times an orthogonal d×d matrix" -- \
    $W --heads 2 --head-dim 16 --wo orthogonal --init cutting-skip
check "--init cutting-skip at H·d_h > d: refused, saying two Haar factors do not multiply to one" refused \
    "(H·d_h = 48, d = 40): two independent Haar factors d×H·d_h and H·d_h×d multiply to a contraction" -- \
    $W --heads 4 --head-dim 12 --wo orthogonal --init cutting-skip
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

# --init mimetic at H·d_h < d: W^V W^O is the best rank-H·d_h approximation of the layer's
# alpha2 Z2 - beta2 I, and head h's W^Q_h W^K_hᵀ the best rank-d_h one of its own target.  The
# targets come from runs of the same seed that hold more of them (W^V W^O at H·d_h = d is the
# whole target; W^Q_h W^K_hᵀ at d_h = 20 its rank-20 approximation, whose best rank-16 one is
# the target's): numpy's SVD of those against the weights exported at 2 heads of 16 and 3 of
# 12 (d = 40), each factor carrying half of the singular values; then numpy's first layer
# (X1 = X0 + Σ_h softmax(X0 W^Q_h (X0 W^K_h)ᵀ/√d_h) X0 W^V_h W^O_h) from the exported input
# against the attention attnscope exports and the numbers it prints of X1.
mimetic_narrow() { # heads head-dim reference-head-dim
    local S="-T 12 -d 40 -L 1 --init mimetic --wo gaussian --skip plain --seed 3" run=$tmp/mimetic-$1-$2
    # shellcheck disable=SC2086
    batch_document "$run-whole" $S --heads 2 --export-weights "$run-whole-w" &&
        batch_document "$run-ref" $S --heads "$1" --head-dim "$3" --export-weights "$run-ref-w" &&
        batch_document "$run" $S --heads "$1" --head-dim "$2" --export-weights "$run-w" &&
        batch_document "$run-x" $S --heads "$1" --head-dim "$2" --export "$run-x" --export-matrix &&
        /usr/bin/python3 - "$run" "$1" "$2" <<'PY'
import math, sys
sys.path.insert(0, "tests/cli")
import json
import numpy as np
from safetensors_tool import read
run, H, dh = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d, n = 40, H * dh
def weights(path):
    t = {name: np.frombuffer(raw, "<f8").reshape(shape) for name, _, shape, raw in read(path + "/model.safetensors")[0]}
    p = "model.layers.0.self_attn."
    return (t[p + "q_proj.weight"].T, t[p + "k_proj.weight"].T, t[p + "v_proj.weight"].T,
            t[p + "o_proj.weight"].T)  # d×n, d×n, d×n, n×d
def best(m, rank):
    u, s, vt = np.linalg.svd(m)
    return (u[:, :rank] * s[:rank]) @ vt[:rank], s[:rank]
q, k, v, o = weights(run + "-w")
worst = 0.0
def off(got, want):
    global worst
    worst = max(worst, np.max(np.abs(got - want)) / np.max(np.abs(want)))
_, _, v_all, o_all = weights(run + "-whole-w")
want, s = best(v_all @ o_all, n)
off(v @ o, want)                              # the rank-n approximation of the target
off(v.T @ v, np.diag(s)); off(o @ o.T, np.diag(s))  # each factor carries sqrt(S)
q_ref, k_ref, _, _ = weights(run + "-ref-w")
dr = q_ref.shape[1] // H
for h in range(H):
    qh, kh = q[:, h * dh:(h + 1) * dh], k[:, h * dh:(h + 1) * dh]
    want, s = best(q_ref[:, h * dr:(h + 1) * dr] @ k_ref[:, h * dr:(h + 1) * dr].T, dh)
    off(qh @ kh.T, want)
    off(qh.T @ qh, np.diag(s)); off(kh.T @ kh, np.diag(s))
def csv(path):
    rows = [line for line in open(path) if not line.startswith("#")][1:]
    return np.array([[float(x) for x in line.split(",")[1:]] for line in rows])
x0 = csv(run + "-x/input.csv")
out, first = x0.copy(), None
for h in range(H):
    sl = slice(h * dh, (h + 1) * dh)
    scores = (x0 @ q[:, sl]) @ (x0 @ k[:, sl]).T / math.sqrt(dh)
    a = np.exp(scores - scores.max(1, keepdims=True)); a /= a.sum(1, keepdims=True)
    first = a if first is None else first
    out += a @ x0 @ v[:, sl] @ o[sl]
off(csv(run + "-x/attention_matrix.csv"), first)
doc = json.load(open(run + ".json"))
sv = np.linalg.svd(out, compute_uv=False)
unit = out / np.linalg.norm(out, axis=1, keepdims=True)
T = len(out)
for key, value in (("token_rms", np.linalg.norm(out) / math.sqrt(T)),
                   ("stable_rank", np.sum(sv ** 4) / sv[0] ** 4),
                   ("token_cosine_mean", ((unit @ unit.T).sum() - T) / (T * (T - 1)))):
    worst = max(worst, abs(doc[key][1] - value) / max(abs(value), 1.0))
print("mimetic, %d heads of %d on d = 40: largest relative difference %.3g" % (H, dh, worst))
sys.exit(0 if worst <= 1e-9 else 1)
PY
}
check "--init mimetic, 2 heads of 16 on d = 40: numpy's rank-32 W^V W^O, rank-16 W^Q_h W^K_hᵀ, first layer" \
    mimetic_narrow 2 16 20
check "--init mimetic, 3 heads of 12 on d = 40: the same at rank 36 and 12" mimetic_narrow 3 12 13
finish
