#!/bin/bash
# A checkpoint's NaN or infinite values are refused at load: exit 2, nothing on stdout, and the
# message names the file, the tensor, its dtype, the first bad element's place in the file's
# layout and its value.  Each of NaN, +Inf and -Inf in a query, key and value projection, a
# norm gain and the embedding table, in F32, BF16 and F16 (their own NaN and infinity bit
# patterns, written here); GPT-2's biases, norm biases, learned positions and fused projections
# in F64.  A tensor attnscope does not read (lm_head, ln_f) may hold NaN; a finite but huge
# value (1e300 in F64) is read and runs, and finite weights whose products overflow give one
# document with nulls and warnings naming the layer.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
llama="-T 8 -d 16 -L 2 -n rms --ln-place pre"
gpt2="-T 4 -d 16 -L 2 --heads 2 --mlp gelu -n ln --ln-place pre --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $llama --export-weights "$tmp/llama" >/dev/null 2>&1 &&
    "$PY" tests/cli/safetensors_tool.py whole-model "$tmp/llama/model.safetensors" "$tmp/llama.safetensors" &&
    "$BIN" $gpt2 --export-weights "$tmp/gpt2" >/dev/null 2>&1 &&
    "$PY" tests/cli/safetensors_tool.py gpt2 "$tmp/gpt2/model.safetensors" "$tmp/gpt2.safetensors" ln ||
    {
        echo "not ok - the checkpoints to change were not written"
        exit 1
    }

# Each case: a copy of a checkpoint in one dtype with one element replaced by the bit pattern
# of a value, and a manifest line: family, file, what the error must say ("" for a run).
"$PY" - "$tmp" <<'PYEOF' >"$tmp/manifest" || exit 1
import os, struct, sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import read, values, write

tmp = sys.argv[1]
SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}
# The bit patterns of each dtype's quiet NaN (and its sign-bit twin, "-nan", which the message
# calls plain "nan") and infinities, and of the F64 1e300.
BITS = {
    "F64": {"nan": 0x7FF8000000000000, "-nan": 0xFFF8000000000000, "inf": 0x7FF0000000000000,
            "-inf": 0xFFF0000000000000, "1e+300": struct.unpack("<Q", struct.pack("<d", 1e300))[0]},
    "F32": {"nan": 0x7FC00000, "-nan": 0xFFC00000, "inf": 0x7F800000, "-inf": 0xFF800000},
    "F16": {"nan": 0x7E00, "-nan": 0xFE00, "inf": 0x7C00, "-inf": 0xFC00},
    "BF16": {"nan": 0x7FC0, "-nan": 0xFFC0, "inf": 0x7F80, "-inf": 0xFF80},
}


def encode(dtype, xs):
    if dtype == "BF16":  # the top half of each binary32 (these test values need no rounding)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", x))[0])[2:]
                        for x in xs)
    code = {"F64": "d", "F32": "f", "F16": "e"}[dtype]
    return struct.pack("<%d%s" % (len(xs), code), *xs)


def case(family, source, dtype, name, value, says):
    """source in dtype with element (1, 2) of a matrix, or 2 of a vector, of name set to the
    bits of value."""
    tensors, meta = read(source)
    out = []
    for n, d, shape, raw in tensors:
        raw = encode(dtype, values(d, raw))
        if n == name:
            index, place = (shape[1] + 2, "row 1, column 2") if len(shape) == 2 else (2, "[2]")
            size = SIZE[dtype]
            bits = BITS[dtype][value].to_bytes(size, "little")
            raw = raw[: index * size] + bits + raw[(index + 1) * size :]
        out.append((n, dtype, shape, raw))
    path = os.path.join(tmp, "%s-%s-%s-%s.safetensors" % (family, dtype, name, value))
    write(path, out, meta)
    if says:
        says = "'%s': tensor '%s' (%s) holds %s at %s: every value must be finite" % (
            path, name, dtype, "nan" if value == "-nan" else value, place)
    else:
        says = ""
    print("%s\t%s\t%s" % (family, path, says))


llama = os.path.join(tmp, "llama.safetensors")
for dtype in ("F32", "BF16", "F16"):
    for name in ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight",
                 "model.layers.0.self_attn.v_proj.weight", "model.layers.1.input_layernorm.weight",
                 "model.embed_tokens.weight"):
        for value in ("nan", "inf", "-inf"):
            case("llama", llama, dtype, name, value, True)
    case("llama", llama, dtype, "model.layers.0.self_attn.q_proj.weight", "-nan", True)
gpt2 = os.path.join(tmp, "gpt2.safetensors")
for name, value in (("transformer.h.0.attn.c_attn.bias", "nan"),
                    ("transformer.h.1.attn.c_attn.weight", "-inf"),
                    ("transformer.h.0.ln_1.bias", "inf"), ("transformer.h.1.ln_2.weight", "nan"),
                    ("transformer.h.0.mlp.c_fc.weight", "nan"),
                    ("transformer.h.1.mlp.c_proj.bias", "-inf"), ("transformer.wpe.weight", "inf"),
                    ("transformer.wte.weight", "nan"), ("transformer.h.0.attn.c_proj.weight", "-nan")):
    case("gpt2", gpt2, "F64", name, value, True)
# Not read, or finite: a run.
case("llama", llama, "F32", "lm_head.weight", "nan", False)
case("gpt2", gpt2, "F64", "transformer.ln_f.bias", "nan", False)
case("llama", llama, "F64", "model.layers.0.self_attn.q_proj.weight", "1e+300", False)
PYEOF

while IFS=$'\t' read -r family file says; do
    settings=$llama
    [ "$family" = gpt2 ] && settings=$gpt2
    # shellcheck disable=SC2086
    "$BIN" --batch $settings --weights "$file" >"$tmp/out" 2>"$tmp/err"
    status=$?
    what=$(basename "$file" .safetensors)
    if [ -n "$says" ]; then
        check "$what: exit 2, the tensor, place and value named, nothing written" \
            bash -c "[ $status -eq 2 ] && [ ! -s '$tmp/out' ] && grep -qF \"$says\" '$tmp/err'"
    else
        check "$what: not refused (exit 0, a document)" \
            bash -c "[ $status -eq 0 ] && '$PY' -c 'import json, sys; json.load(open(sys.argv[1]))' '$tmp/out'"
    fi
    [ "$status" -eq 0 ] || [ -n "$says" ] || head -c 300 "$tmp/err"
done <"$tmp/manifest"

# Finite weights whose products overflow: the run goes on, stdout holds one document (LAPACK's
# complaints about a matrix with infinities would land there), and the warnings name the layer
# where the values stop being finite, null from there on.  scale SETTINGS FACTOR TENSORS
# (comma-separated parts of names) EXPECTED-WARNING...
overflows() {
    local settings=$1 factor=$2 parts=$3
    shift 3
    "$PY" - "$tmp/$family/model.safetensors" "$tmp/huge.safetensors" "$factor" "$parts" <<'PYEOF' || return 1
import sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import pack, read, values, write
src, dst, factor, parts = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4].split(",")
tensors, meta = read(src)
write(dst, [(n, d, s, pack("F64", [x * factor if any(p in n for p in parts) else x
                                    for x in values(d, raw)])) for n, d, s, raw in tensors], meta)
PYEOF
    # shellcheck disable=SC2086
    "$BIN" --batch $settings --weights "$tmp/huge.safetensors" >"$tmp/huge.json" 2>"$tmp/huge.err" || return 1
    "$PY" - "$tmp/huge.json" "$@" <<'PYEOF'
import json, sys
document = json.load(open(sys.argv[1]))
missing = [w for w in sys.argv[2:] if w not in document["warnings"]]
if missing:
    sys.exit("missing %s in %s" % (missing, document["warnings"]))
PYEOF
}
family=llama
qk="W^Q_h W^K_g^T overflows the double range (its weights are too large); its norm and Zhai et al.'s entropy bound are null"
for conditioning in "" --conditioning; do
    check "W^Q, W^K x 1e200 $conditioning: one document, the layers' W^Q W^K named" \
        overflows "$llama $conditioning" 1e200 q_proj,k_proj "layer 1, head 1: $qk" "layer 2, head 1: $qk"
done
family=gpt2
check "two heads, an MLP, pre-LN, W^Q, W^K x 1e200: one document, both heads of both layers named" \
    overflows "$gpt2" 1e200 q_proj,k_proj "layer 1, head 1: $qk" "layer 1, head 2: $qk" "layer 2, head 2: $qk"
# No LayerNorm: W^V x 1e300 makes layer 2's logits overflow; the warning blames the weights.
"$BIN" -T 8 -d 16 -L 2 --export-weights "$tmp/plain" >/dev/null 2>&1
family=plain
for conditioning in "" --conditioning; do
    check "W^V x 1e300 $conditioning: null from layer 2, the checkpoint's weights named" \
        overflows "-T 8 -d 16 -L 2 $conditioning" 1e300 v_proj \
        "the network's attention matrix overflows the double range at layer 2 (the checkpoint's weights are too large); its values from there on are null"
done
# W^V x 1e200 with --conditioning: K is finite and the exact path gives kappa_jacobian at layer
# 1, but K^T K overflows, so the Krylov paths (kron, lanczos) leave it null and say why, not
# that B0 is singular or far from K.
for path in kron lanczos; do
    check "W^V x 1e200 --conditioning-path $path: K^T K's overflow named at layer 1" \
        overflows "-T 8 -d 16 -L 2 --conditioning --conditioning-path $path" 1e200 v_proj
    check "... and kappa_jacobian null there, no B0 warning" "$PY" -c "
import json, sys
c = json.load(open(sys.argv[1]))['conditioning']
said = 'conditioning: K^T K overflows the double range at 2 of the 4 layers of both networks, the first layer 1 (the weights are too large)'
sys.exit(0 if any(w.startswith(said) for w in c['warnings']) and c['kappa_jacobian'][0] is None
         and not any('B0' in w for w in c['warnings']) else 1)" "$tmp/huge.json"
done
check "W^V x 1e200 --conditioning-path exact: kappa_jacobian at layer 1 (K itself is finite)" \
    overflows "-T 8 -d 16 -L 2 --conditioning --conditioning-path exact" 1e200 v_proj
check "... a number, no overflow warning" "$PY" -c "
import json, sys
c = json.load(open(sys.argv[1]))['conditioning']
sys.exit(0 if c['kappa_jacobian'][0] > 1 and not any('K^T K overflows' in w for w in c['warnings']) else 1)" "$tmp/huge.json"
# W^V, W^O x 1e200: W_VO = W^V W^O overflows, and the conditioning's Jacobian with it, whose
# singular values LAPACK refused ("LAPACK failed (info -5)", exit 1): null, the layer named.
swiglu="-T 8 -d 16 -L 3 --heads 2 --mlp swiglu -n rms --ln-place pre --wo gaussian --qk-norm head"
# shellcheck disable=SC2086
"$BIN" $swiglu --export-weights "$tmp/swiglu" >/dev/null 2>&1
family=swiglu
check "W^V, W^O x 1e200 --conditioning: exit 0, one document, null from layer 1, the layer named" \
    overflows "$swiglu --conditioning" 1e200 v_proj,o_proj \
    "the network overflows the double range at layer 1 (the checkpoint's weights are too large); its values from there on are null"
check "... and the conditioning's own warning names layer 1" "$PY" -c "
import json, sys
c = json.load(open(sys.argv[1]))['conditioning']
sys.exit(0 if 'conditioning of the network: the tokens overflow after layer 1, null from there on' in c['warnings']
         and c['kappa_jacobian'] == [None, None, None] else 1)" "$tmp/huge.json"

# --export-weights with such a checkpoint: refused before anything is written.
file=$(grep -m1 'v_proj.weight-inf' "$tmp/manifest" | cut -f2)
# shellcheck disable=SC2086
"$BIN" $llama --weights "$file" --export-weights "$tmp/exported" >"$tmp/out" 2>"$tmp/err"
status=$?
check "--export-weights: exit 2, the tensor named, no directory written" \
    bash -c "[ $status -eq 2 ] && [ ! -e '$tmp/exported' ] && grep -qF \"tensor 'model.layers.0.self_attn.v_proj.weight' (F32) holds inf at row 1, column 2\" '$tmp/err'"

# The screen's start refuses the same way, before the terminal is taken.
file=$(grep -m1 'q_proj.weight-nan' "$tmp/manifest" | cut -f2)
# shellcheck disable=SC2086
"$BIN" $llama --weights "$file" </dev/null >"$tmp/out" 2>"$tmp/err"
status=$?
check "the screen's start: exit 2, the tensor named" \
    bash -c "[ $status -eq 2 ] && grep -qF \"tensor 'model.layers.0.self_attn.q_proj.weight' (F32) holds nan at row 1, column 2\" '$tmp/err'"
finish
