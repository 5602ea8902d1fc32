#!/bin/bash
# --export-weights DIR then --weights DIR: the batch document again, bit for bit (F64), for
# configurations that use every tensor kind, but for the theory (sigma, its laws and curves,
# the entropy prediction, the phase's beta), which comes from sigma_qk's draws and is null with
# its reason and a warning for a checkpoint's weights; a checkpoint changed by an independent writer
# (tests/cli/safetensors_tool.py) changes it, a resharded one does not; F32 and BF16 exports
# hold python's own rounding of the F64 values and give the document of those values, bit for
# bit, for every architecture preset too (numpy's rounding); a trained checkpoint's gains and
# biases are read and re-exported bit for bit; shapes that do not fit, NaN weights (refused), the
# export's atomic writes and the options' misuse are each said.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tool=tests/cli/safetensors_tool.py
base="--batch -T 12 -d 16 -L 3"

configs=(
    "--heads 2 --mlp gelu --wo gaussian"
    "--heads 4 --kv-heads 2 --mlp swiglu --qk-norm head --rope half -n rms --ln-place pre"
    "--qk-norm full --heads 2 --kv-heads 1 --wo orthogonal -g center"
    "-a markov --heads 2 --mlp relu"
    "--init mimetic --heads 2 --wo gaussian --mlp geglu --mlp-hidden 24"
    "--init cutting-skip -L 4 --conditioning"
    "--heads 2 -n rms --ln-place peri --mlp geglu --qk-norm head --norm-gain-offset 1"
    "--heads 2 --sink 0 --sink-std 0.02 --mlp swiglu -n rms --ln-place pre"
    "--heads 2 -n ln --ln-place pre --skip plain --ln-scale sqrt-d --mlp gelu --wo gaussian"
)
# The two documents (drawn, then read from a checkpoint) are the same number for number (JSON
# parsed: Python's floats are the doubles printed), but for the theory, which the second
# withdraws: null, with the reason, and its warning first.  Exit 0 when so, 1 when the
# documents differ, 3 when the second does not withdraw the theory, 4 when one is no document.
same_measures() { # drawn.json read.json
    "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
NOTE = "weights from a checkpoint"
try:
    drawn, read = (json.load(open(path)) for path in sys.argv[1:3])
except ValueError as e:
    print(f"not a document: {e}", file=sys.stderr)
    sys.exit(4)  # exit 1 means "they differ" only
theory = ["sigma", "theory", "attention_entropy_theory", "attention_phase",
          "attention_phase_critical_beta", "counterpart_attention_phase_critical_beta"]
t, e, p = read["theory"], read["attention_entropy_theory"], read["attention_phase"]
withdrawn = (read["sigma"] is None and
             all(t[k] is None for k in ("sigma", "circle_radius", "singular_law", "singular_edge",
                                        "stable_rank", "counterpart_stable_rank")) and
             e["mean"] is None and e["logit_std"] is None and p["beta"] is None and
             all(s is None for s in p["side"] + p["counterpart_side"]) and
             all(x is None for x in read["attention_phase_critical_beta"]) and
             all(n.startswith(NOTE) for n in (t["note"], e["note"], p["note"])) and
             read["warnings"][0].startswith(NOTE))
read["warnings"] = read["warnings"][1:]
# A setting that says how weights are drawn (--init mimetic, --sink-std), given to both runs,
# has no effect on the checkpoint's: the read run warns so, naming the checkpoint.
read["warnings"] = [w for w in read["warnings"] if "drawn weights (no --weights)" not in w]
# A setting given to the drawing run alone (the table's --vocab, a gain offset the drawn weights
# have no gains for) warns there as having no effect: the read run was not given it.
drawn["warnings"] = [w for w in drawn["warnings"]
                     if " has no effect" not in w or w in read["warnings"]]
for key in theory + ["weights"]:  # "weights": drawn (null) and the checkpoint's identity
    drawn.pop(key), read.pop(key)
sys.exit(3 if not withdrawn else 0 if drawn == read else 1)
PYEOF
}
round_trip() { # settings
    local dir=$tmp/rt
    rm -rf "$dir"
    # shellcheck disable=SC2086
    "$BIN" $base $1 --export-weights "$dir" >"$tmp/drawn.json" 2>"$tmp/err" &&
        grep -q "wrote $dir/model.safetensors" "$tmp/err" &&
        "$BIN" $base $1 --weights "$dir" >"$tmp/read.json" &&
        [ -s "$tmp/read.json" ] && same_measures "$tmp/drawn.json" "$tmp/read.json"
}
for settings in "${configs[@]}"; do
    check "round trip, bit for bit: $settings" round_trip "$settings"
done
# Every architecture preset of the 2026 block at its small width (T = 32 and two layers, to keep
# the test short).
small_presets=(gpt2-small-small llama3-8b-small mistral-7b-small qwen3-8b-small olmo2-7b-small
    gemma3-4b-small gpt-oss-20b-small)
for preset in "${small_presets[@]}"; do
    check "round trip, bit for bit: presets/$preset.preset" round_trip \
        "--preset presets/$preset.preset -T 32 -L 2"
done
# Every model preset's export names the Hugging Face family whose model is its block (the
# model_type and class a reader expects for Llama's names), and --hf-config of that config.json
# gives the preset's document back, bit for bit (six layers, so that Gemma 3's 5:1 pattern is
# whole; the drawn weights are the seed's again): the file's own warnings and "hf_config"
# aside, and those warnings are exactly the fields the family's model has and the block leaves
# out (Gemma's scaled embedding, gpt-oss's experts), nothing else.  OLMo 2's preset draws OLMo-core's cut normal where HF's config says a plain one
# (docs/hf-config.md): its --init follows the file.  gpt-oss's export is its attention path, and
# a warning says transformers' model would add experts.  GPT-2's block is written under GPT-2's
# names (GPT2Model), and ViT's (no mask) under ViT's (ViTModel), each with the fields its config
# class reads; a block no family has (GPT-2's with -g center): no model_type, a warning that
# says so, and --hf-config refuses the file.
same_but_file() { # preset.json hf.json config.json "the fields the file's warnings name"
    "$PY" - "$1" "$2" "$3" "$4" <<'PYEOF'
import json, sys
drawn, read = (json.load(open(p)) for p in sys.argv[1:3])
warned = sorted(u["field"] for u in read.pop("hf_config")["unmodelled"])
if warned != sorted(sys.argv[4].split()):
    print(f"the read-back warns {warned}, expected {sorted(sys.argv[4].split())}", file=sys.stderr)
    sys.exit(1)
read["warnings"] = [w for w in read["warnings"] if not w.startswith(sys.argv[3] + ": ")]
# Drawing options given with --weights warn that they have no effect; the file gives none.
drawn["warnings"] = [w for w in drawn["warnings"] if "drawn weights (no --weights)" not in w]
drawn.pop("weights"), read.pop("weights")  # the checkpoint run, where one was: another file
sys.exit(0 if drawn == read else 1)
PYEOF
}
family_round_trip() { # preset model_type architecture export-warning ("": none) warned-fields [options after --hf-config]
    local dir=$tmp/family-$1
    rm -rf "$dir"
    "$BIN" --batch --preset "presets/$1.preset" -T 32 -L 6 --seed 3 --export-weights "$dir" \
        >"$tmp/family.json" \
        2>"$tmp/family.err" &&
        grep -qF "\"model_type\": \"$2\"," "$dir/config.json" &&
        grep -qF "\"architectures\": [\"$3\"]," "$dir/config.json" &&
        if [ -n "$4" ]; then
            grep -qF "attnscope: warning: --export-weights '$dir': $4" "$tmp/family.err"
        else ! grep -q "warning: --export-weights" "$tmp/family.err"; fi &&
        "$BIN" --batch -T 32 --seed 3 --hf-config "$dir" ${6:-} >"$tmp/family-hf.json" \
            2>/dev/null &&
        same_but_file "$tmp/family.json" "$tmp/family-hf.json" "$dir/config.json" "$5"
}
check "llama3-8b-small: llama, and --hf-config of the export gives its document" \
    family_round_trip llama3-8b-small llama LlamaForCausalLM "" ""
check "mistral-7b-small (no window: Llama's block): llama, the same" \
    family_round_trip mistral-7b-small llama LlamaForCausalLM "" ""
check "qwen3-8b-small: qwen3 (QK-norm per head), the same" \
    family_round_trip qwen3-8b-small qwen3 Qwen3ForCausalLM "" ""
check "olmo2-7b-small: olmo2 (norms after the branches, QK-norm over the width), the same" \
    family_round_trip olmo2-7b-small olmo2 Olmo2ForCausalLM "" "" "--init trunc-normal"
check "gpt2-small-small: gpt2 (LayerNorm, learned positions' block, GELU MLP), the same" \
    family_round_trip gpt2-small-small gpt2 GPT2Model "" "model_type"
# The names and fields GPT-2's model loads: every tensor under h.N. (c_attn (d, 3d), Conv1D's
# (in, out), and every bias, zero as drawn), n_embd and its kin (n_inner null: 4·d), no field
# the Llama family's config has; ViT's likewise (encoder.layer.N., "qkv_bias": false without q, k, v biases).
names_and_fields() { # dir prefix fields-present fields-absent
    "$PY" - "$@" <<'PYEOF'
import json, struct, sys
path, prefix, present, absent = sys.argv[1:5]
raw = open(path + "/model.safetensors", "rb").read()
header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
header.pop("__metadata__")
config = json.load(open(path + "/config.json"))
ok = all(name.startswith(prefix) for name in header)
if prefix == "h.":
    ok &= header["h.0.attn.c_attn.weight"]["shape"] == [256, 768] and config["n_inner"] is None
    ok &= all(p + ".bias" in header for p in ("h.0.attn.c_attn", "h.0.attn.c_proj",
                                               "h.0.mlp.c_fc", "h.0.mlp.c_proj"))
else:
    ok &= not any(n.endswith(("query.bias", "key.bias", "value.bias")) for n in header)
    ok &= config.get("qkv_bias") is False
ok &= all(f in config for f in present.split()) and not any(f in config for f in absent.split())
sys.exit(0 if ok else 1)
PYEOF
}
check "... under GPT-2's names, with GPT-2's fields" names_and_fields \
    "$tmp/family-gpt2-small-small" "h." \
    "n_embd n_head n_layer n_positions n_inner activation_function layer_norm_epsilon" \
    "hidden_size num_key_value_heads head_dim sliding_window rms_norm_eps attention_bias"
vit_block="--heads 4 -n ln --ln-place pre --skip plain --ln-scale sqrt-d --mlp gelu --wo gaussian"
vit_round_trip() { # dir
    rm -rf "$1"
    # shellcheck disable=SC2086
    "$BIN" --batch -T 32 -d 64 -L 3 --seed 3 $vit_block --ln-eps 1e-12 --mlp-hidden 256 \
        --init gpt2 --depth-scale none --export-weights "$1" \
        >"$tmp/vit.json" 2>"$tmp/vit.err" &&
        grep -qF '"model_type": "vit",' "$1/config.json" &&
        grep -qF '"architectures": ["ViTModel"],' "$1/config.json" &&
        ! grep -q "warning: --export-weights" "$tmp/vit.err" &&
        "$BIN" --batch -T 32 --seed 3 --hf-config "$1" >"$tmp/vit-hf.json" 2>/dev/null &&
        same_but_file "$tmp/vit.json" "$tmp/vit-hf.json" "$1/config.json" "model_type" &&
        names_and_fields "$1" "encoder.layer." \
            "hidden_size num_attention_heads num_hidden_layers intermediate_size hidden_act layer_norm_eps" \
            "num_key_value_heads head_dim max_position_embeddings sliding_window rms_norm_eps attention_bias"
}
check "ViT's block (LayerNorm before each branch, no mask, GELU MLP): vit under ViT's names, the same" \
    vit_round_trip "$tmp/family-vit"
check "gemma3-4b-small: gemma3_text (peri-norms, gains 1 + w, its local θ on 5 of 6), the same" \
    family_round_trip gemma3-4b-small gemma3_text Gemma3ForCausalLM "" "model_type"
check "gpt-oss-20b-small: gpt_oss (sinks, every other layer's window), the same; its experts warned" \
    family_round_trip gpt-oss-20b-small gpt_oss GptOssForCausalLM \
    "--mlp none: transformers' GptOssForCausalLM follows each attention with its MLP" \
    "num_local_experts experts_per_token swiglu_limit intermediate_size"
# gpt-oss's config class defaults to YaRN: its export says "no scaling" as null.
check "... whose config.json says \"rope_scaling\": null" \
    grep -qF '"rope_scaling": null,' "$tmp/family-gpt-oss-20b-small/config.json"
# Gemma 2 and 3's MLPs read hidden_activation (hidden_act is Gemma 1's): a Gemma block with
# SwiGLU is written under that name alone, and its read-back is SwiGLU, its document the same.
gemma_swiglu() { # dir
    rm -rf "$1"
    "$BIN" --batch --preset presets/gemma3-4b-small.preset -T 32 -L 6 --seed 3 --mlp swiglu \
        --export-weights "$1" >"$tmp/gemma-swiglu.json" 2>/dev/null &&
        grep -qF '"model_type": "gemma3_text",' "$1/config.json" &&
        grep -qF '"hidden_activation": "silu",' "$1/config.json" &&
        ! grep -q '"hidden_act"' "$1/config.json" &&
        "$BIN" --batch -T 32 --seed 3 --hf-config "$1" >"$tmp/gemma-swiglu-hf.json" 2>/dev/null &&
        same_but_file "$tmp/gemma-swiglu.json" "$tmp/gemma-swiglu-hf.json" "$1/config.json" \
            "model_type"
}
check "gemma3-4b-small with --mlp swiglu: \"hidden_activation\": \"silu\", the same document" \
    gemma_swiglu "$tmp/gemma-swiglu"
# A block transformers' model of a family cannot express is named as no family's: the gap
# removal (-g) changes the forward, Llama's attention caps no logits and turns every dimension
# of a head.  The read-back starts from the defaults, so none of these passes unseen.
no_model_type() { # options...
    rm -rf "$tmp/unnamed"
    "$BIN" --batch --preset presets/llama3-8b-small.preset -T 16 -L 2 "$@" \
        --export-weights "$tmp/unnamed" >/dev/null 2>"$tmp/unnamed.err" &&
        ! grep -q '"model_type"' "$tmp/unnamed/config.json" &&
        grep -qF "config.json names no model_type" "$tmp/unnamed.err"
}
for extra in "-g center" "-g deflate" "-g uniform" "--logit-softcap 30" "--rope-fraction 0.5"; do
    # shellcheck disable=SC2086
    check "llama3-8b-small $extra: no model_type, and the warning" no_model_type $extra
done
# A window of at least T − 1 keys covers every token: the causal mask, as gpt-oss's file
# reads at that T, so the export still names gpt_oss (at T = 16 its 16 keys cover all).
short_gpt_oss() { # dir
    rm -rf "$1"
    "$BIN" --batch --preset presets/gpt-oss-20b-small.preset -T 16 -L 2 --export-weights "$1" \
        >/dev/null 2>&1 && grep -qF '"model_type": "gpt_oss",' "$1/config.json"
}
check "gpt-oss-20b-small at T = 16 (its window covers every token): gpt_oss" \
    short_gpt_oss "$tmp/gpt-oss-short"
no_family() { # dir
    local said="config.json names no model_type: no Hugging Face family that loads these tensor names (llama, mistral, qwen3, olmo2, gemma2, gemma3_text, gpt_oss) nor gpt2 or vit under their own names has this block"
    rm -rf "$1"
    "$BIN" --batch --preset presets/gpt2-small-small.preset -T 32 -L 2 -g center --export-weights "$1" \
        >/dev/null 2>"$tmp/family.err" &&
        ! grep -q '"model_type"' "$1/config.json" &&
        grep -qF "attnscope: warning: --export-weights '$1': $said" "$tmp/family.err" &&
        grep -qF "\"export_warning\":\"$said" "$1/config.json"
}
check "gpt2-small-small -g center (no family's block): Llama's names, no model_type, a warning that says why" \
    no_family "$tmp/family-gpt2"
check "... under Llama's names" grep -qF '"model.layers.0.self_attn.q_proj.weight"' \
    "$tmp/family-gpt2/model.safetensors"
check "... which --hf-config refuses, saying it is an export" ends_saying 2 \
    "(a config.json --export-weights wrote: give its settings as options)" -- \
    "$BIN" --batch -T 32 --hf-config "$tmp/family-gpt2"

# Every architecture preset at F32 and BF16: the checkpoint written at the narrow dtype gives,
# bit for bit, the document of numpy's rounding of the F64 checkpoint's values (once, from the
# double, ties to even) written back as F64, and not the document of the unrounded values.
# The full-width presets (one layer each, 1-2 GB files) run with ATTNSCOPE_SLOW_PRESETS=1.
narrow_presets=("${small_presets[@]}")
if [ -n "${ATTNSCOPE_SLOW_PRESETS:-}" ]; then
    narrow_presets+=(gpt2-small llama3-8b mistral-7b qwen3-8b olmo2-7b gemma3-4b gpt-oss-20b)
fi
round_numpy() { # F64.safetensors out.safetensors F32|BF16
    /usr/bin/python3 - "$@" <<'PYEOF'
import sys
sys.path.insert(0, "tests/cli")
import numpy as np
from safetensors_tool import read, write
def rounded(x, dtype):
    if dtype == "F32":
        return x.astype(np.float32).astype(np.float64)
    m, e = np.frexp(x)  # BF16: 8 significant bits, from the double once
    unit = np.maximum(e - 8, -133)
    r = np.ldexp(np.round(np.ldexp(x, -unit)), unit)  # np.round: ties to even
    return np.where(np.abs(r) < 2.0**128, r, np.copysign(np.inf, x))
tensors, meta = read(sys.argv[1])
write(sys.argv[2], [(n, d, s, rounded(np.frombuffer(r, "<f8"), sys.argv[3]).astype("<f8").tobytes())
                    for n, d, s, r in tensors], meta)
PYEOF
}
narrow_round_trip() { # preset dtype
    local layers=1 dir=$tmp/narrow-$1
    [ "${1%-small}" != "$1" ] && layers=2
    local settings="--preset presets/$1.preset -T 32 -L $layers"
    # shellcheck disable=SC2086
    [ -d "$dir" ] || { mkdir "$dir" && "$BIN" $settings --export-weights "$dir/f64" >/dev/null 2>&1 &&
        "$BIN" --batch $settings --weights "$dir/f64" >"$dir/f64.json" 2>/dev/null; } || return 1
    rm -rf "${dir:?}/$2"
    # shellcheck disable=SC2086
    "$BIN" $settings --export-weights "$dir/$2" --export-dtype "${2,,}" >/dev/null 2>&1 &&
        round_numpy "$dir/f64/model.safetensors" "$dir/rounded-$2.safetensors" "$2" &&
        "$BIN" --batch $settings --weights "$dir/$2" >"$dir/$2.json" 2>/dev/null &&
        "$BIN" --batch $settings --weights "$dir/rounded-$2.safetensors" >"$dir/rounded-$2.json" 2>/dev/null &&
        [ -s "$dir/$2.json" ] && cmp -s <(without_weights "$dir/$2.json") <(without_weights "$dir/rounded-$2.json") &&
        ! cmp -s <(without_weights "$dir/$2.json") <(without_weights "$dir/f64.json")
    local status=$?
    rm -rf "${dir:?}/$2" "$dir/rounded-$2.safetensors"
    return $status
}
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    for preset in "${narrow_presets[@]}"; do
        [ -f "presets/$preset.preset" ] || { not_ok "presets/$preset.preset is missing"; continue; }
        for dtype in F32 BF16; do
            check "presets/$preset.preset at $dtype: the document of its rounded values, bit for bit" \
                narrow_round_trip "$preset" $dtype
        done
        rm -rf "$tmp/narrow-$preset"
    done
else
    skip "the presets at F32 and BF16" "Debian's python3-numpy is not installed"
fi
# The sinks are the checkpoint's own (self_attn.sinks, gpt-oss's name): one changed by an
# independent writer changes the document.
sinks_read() {
    local dir=$tmp/sinks settings="--heads 2 --sink 0 --sink-std 0.02"
    rm -rf "$dir"
    # shellcheck disable=SC2086
    "$BIN" $base $settings --export-weights "$dir" >"$tmp/s1.json" 2>/dev/null &&
        "$PY" $tool set "$dir/model.safetensors" "$tmp/sink.safetensors" model.layers.1.self_attn.sinks 1 3.0 &&
        "$BIN" $base $settings --weights "$tmp/sink.safetensors" >"$tmp/s2.json" 2>/dev/null &&
        { same_measures "$tmp/s1.json" "$tmp/s2.json"; [ $? -eq 1 ]; }
}
check "a sink changed in the file changes the document" sinks_read

# The weights come from the file: a tensor scaled by an independent writer changes the
# document, the same tensors in two shards (reverse order, other padding) do not.
A="--heads 2 --mlp gelu --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $base $A --export-weights "$tmp/w" >"$tmp/w.json" 2>/dev/null
if "$PY" $tool scale "$tmp/w/model.safetensors" "$tmp/scaled.safetensors" \
    model.layers.1.self_attn.v_proj.weight 2 2>/dev/null; then
    # shellcheck disable=SC2086
    scaled_differs() {
        # shellcheck disable=SC2086
        "$BIN" $base $A --weights "$tmp/scaled.safetensors" >"$tmp/s.json" &&
            { same_measures "$tmp/w.json" "$tmp/s.json"; [ $? -eq 1 ]; }
    }
    check "a scaled W^V changes the document" scaled_differs
    "$PY" $tool shard "$tmp/w/model.safetensors" "$tmp/sharded"
    # shellcheck disable=SC2086
    sharded_same() {
        # shellcheck disable=SC2086
        "$BIN" $base $A --weights "$tmp/sharded" >"$tmp/sh.json" && same_measures "$tmp/w.json" "$tmp/sh.json"
    }
    check "two shards and the index: the same document" sharded_same
    "$PY" $tool set "$tmp/w/model.safetensors" "$tmp/nan.safetensors" model.layers.2.mlp.up_proj.weight 3 nan
    # shellcheck disable=SC2086
    "$BIN" $base $A --weights "$tmp/nan.safetensors" >"$tmp/nan.json" 2>"$tmp/err"
    status=$?
    check "NaN weights: exit 2, the tensor named, no document" bash -c "[ $status -eq 2 ] && [ ! -s '$tmp/nan.json' ] && grep -q \"'$tmp/nan.safetensors': tensor 'model.layers.2.mlp.up_proj.weight' (F64) holds nan at row 0, column 3: every value must be finite\" '$tmp/err'"
    # F32: each value python's struct rounding of the F64 one (to nearest, ties to even).
    # shellcheck disable=SC2086
    "$BIN" $base $A --export-weights "$tmp/w32" --export-dtype f32 >/dev/null 2>&1
    f32_rounded() {
        local name=model.layers.0.mlp.down_proj.weight
        "$PY" -B - "$tmp/w/model.safetensors" "$tmp/w32/model.safetensors" "$name" <<'PYEOF'
import struct, sys
sys.path.insert(0, "tests/cli")
import safetensors_tool as st
wide = dict((n, st.values(d, r)) for n, d, s, r in st.read(sys.argv[1])[0])[sys.argv[3]]
narrow = [(d, st.values(d, r)) for n, d, s, r in st.read(sys.argv[2])[0] if n == sys.argv[3]][0]
rounded = [struct.unpack("<f", struct.pack("<f", x))[0] for x in wide]
sys.exit(0 if narrow[0] == "F32" and narrow[1] == rounded and rounded != wide else 1)
PYEOF
    }
    check "--export-dtype f32: python's rounding of every F64 value" f32_rounded
    # shellcheck disable=SC2086
    "$BIN" $base $A --export-weights "$tmp/w16" --export-dtype bf16 >/dev/null 2>&1
    # An F32 or BF16 checkpoint runs exactly its rounded values: the same document as an F64
    # checkpoint of python's rounding of the drawn weights (so the export rounded as python
    # does, and the reader widened exactly).
    same_as_rounded() { # dtype directory
        "$PY" $tool round "$tmp/w/model.safetensors" "$tmp/rounded-$1.safetensors" "$1" &&
            "$BIN" $base $A --weights "$2" >"$tmp/narrow.json" &&
            "$BIN" $base $A --weights "$tmp/rounded-$1.safetensors" >"$tmp/rounded.json" &&
            cmp <(without_weights "$tmp/narrow.json") <(without_weights "$tmp/rounded.json") &&
            { same_measures "$tmp/w.json" "$tmp/narrow.json"; [ $? -eq 1 ]; }
    }
    check "--export-dtype f32: the document of the F32-rounded weights, bit for bit" same_as_rounded F32 "$tmp/w32"
    check "--export-dtype bf16: the document of the BF16-rounded weights, bit for bit" same_as_rounded BF16 "$tmp/w16"
else
    skip "the checks with an independent writer" "python3 cannot run here"
fi

# The shapes' checks, on the file alone (a directory's config.json is checked first, below).
# shellcheck disable=SC2086
check "a wider configuration: the tensor, its shape and the one expected" refused \
    "tensor 'model.layers.0.self_attn.q_proj.weight' has shape [16, 16], expected [32, 32]" -- \
    "$BIN" --batch -T 12 -d 32 -L 3 $A --weights "$tmp/w/model.safetensors"
# shellcheck disable=SC2086
check "no MLP: its tensors are not weights of the configuration" refused \
    "tensor 'model.layers.0.mlp.up_proj.weight' is not a weight of this configuration" -- \
    "$BIN" $base --heads 2 --wo gaussian --weights "$tmp/w/model.safetensors"
# shellcheck disable=SC2086
check "a deeper configuration: the missing tensor named" refused \
    "no tensor 'model.layers.3.self_attn.q_proj.weight' (shape [16, 16])" -- \
    "$BIN" --batch -T 12 -d 16 -L 4 $A --weights "$tmp/w/model.safetensors"
# A trained checkpoint's gains and biases are read (test_weights checks what they do): the
# document changes, and a re-export of the checkpoint holds them, so that reading it back gives
# the same document bit for bit.
trained_read() { # checkpoint unit-document settings...
    local checkpoint=$1 unit=$2 dir=$tmp/re
    shift 2
    rm -rf "$dir"
    "$BIN" "$@" --weights "$checkpoint" >"$tmp/trained.json" 2>/dev/null &&
        { same_measures "$unit" "$tmp/trained.json"; [ $? -eq 1 ]; } &&
        "$BIN" "$@" --weights "$checkpoint" --export-weights "$dir" >/dev/null 2>&1 &&
        "$BIN" "$@" --weights "$dir" >"$tmp/re-read.json" &&
        cmp -s <(without_weights "$tmp/re-read.json") <(without_weights "$tmp/trained.json")
}
# shellcheck disable=SC2086
"$BIN" $base --qk-norm head --export-weights "$tmp/qk" >"$tmp/qk.json" 2>/dev/null
if "$PY" $tool set "$tmp/qk/model.safetensors" "$tmp/gain.safetensors" model.layers.1.self_attn.k_norm.weight 2 0.5 2>/dev/null; then
    # shellcheck disable=SC2086
    check "a QK-norm gain other than 1 is read, and re-exported bit for bit" \
        trained_read "$tmp/gain.safetensors" "$tmp/qk.json" $base --qk-norm head
    # A NaN gain is refused at load like any other weight (tests/cli/weights-nonfinite.sh).
    "$PY" $tool set "$tmp/qk/model.safetensors" "$tmp/nangain.safetensors" model.layers.1.self_attn.q_norm.weight 0 nan
    nan_gain() {
        # shellcheck disable=SC2086
        "$BIN" $base --qk-norm head --weights "$tmp/nangain.safetensors" >"$tmp/ng.json" 2>"$tmp/ng.err"
        [ $? -eq 2 ] && [ ! -s "$tmp/ng.json" ] &&
            grep -q "tensor 'model.layers.1.self_attn.q_norm.weight' (F64) holds nan at \[0\]: every value must be finite" "$tmp/ng.err"
    }
    check "a NaN QK-norm gain: exit 2, the tensor named" nan_gain
    # A value bias (Qwen2's v_proj.bias, optional under Llama's names) is read: the one-head
    # network is then affine in X, so the frozen-attention gradients' product formula is null.
    # shellcheck disable=SC2086
    value_bias() {
        "$BIN" $base --export-weights "$tmp/one" >"$tmp/one.json" 2>/dev/null &&
            "$PY" $tool add "$tmp/one/model.safetensors" "$tmp/vbias.safetensors" model.layers.1.self_attn.v_proj.bias 16 0.25 &&
            "$BIN" $base --weights "$tmp/vbias.safetensors" >"$tmp/vb.json" 2>/dev/null &&
            "$PY" -c "import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:3]); sys.exit(0 if a['gradient_norm'][0] is not None and b['gradient_norm'] == [None] * 3 and a['stable_rank'][1] == b['stable_rank'][1] and a['stable_rank'][2] != b['stable_rank'][2] else 1)" "$tmp/one.json" "$tmp/vb.json"
    }
    check "a value bias is read: layer 2 changes, the gradients' product formula is null" value_bias
    # Qwen2's biases (q_proj's, k_proj's and v_proj's on every layer, no other) on Llama's block
    # name qwen2 (Qwen2ForCausalLM, whose model has exactly those); --hf-config of the re-export
    # with --weights gives the checkpoint's document back, the file's own warnings and
    # "hf_config" aside.  A W^O bias besides them is no family's: no model_type.
    qwen2_biases() {
        local llama="-d 16 --heads 2 --kv-heads 1 -n rms --ln-place pre --ln-scale sqrt-d
            --mlp swiglu --mlp-hidden 24 --rope half --init gpt2 --init-std 0.02 --depth-scale none
            -m causal --wo gaussian -k plain" layer part
        rm -rf "$tmp/llama" "$tmp/qwen2"
        # shellcheck disable=SC2086
        "$BIN" $base $llama --export-weights "$tmp/llama" >/dev/null 2>&1 &&
            cp "$tmp/llama/model.safetensors" "$tmp/qkv.safetensors" || return 1
        for layer in 0 1 2; do
            for part in q:16 k:8 v:8; do
                "$PY" $tool add "$tmp/qkv.safetensors" "$tmp/qkv.tmp" \
                    "model.layers.$layer.self_attn.${part%%:*}_proj.bias" "${part##*:}" 0.125 &&
                    mv "$tmp/qkv.tmp" "$tmp/qkv.safetensors" || return 1
            done
        done
        # shellcheck disable=SC2086
        "$BIN" $base $llama --weights "$tmp/qkv.safetensors" --export-weights "$tmp/qwen2" \
            >"$tmp/qkv.json" 2>"$tmp/qkv.err" &&
            ! grep -q "warning: --export-weights" "$tmp/qkv.err" &&
            grep -qF '"model_type": "qwen2",' "$tmp/qwen2/config.json" &&
            grep -qF '"architectures": ["Qwen2ForCausalLM"],' "$tmp/qwen2/config.json" &&
            "$BIN" --batch -T 12 --hf-config "$tmp/qwen2" --weights "$tmp/qwen2" \
                >"$tmp/qwen2.json" 2>/dev/null &&
            same_but_file "$tmp/qkv.json" "$tmp/qwen2.json" "$tmp/qwen2/config.json" model_type &&
            "$PY" $tool add "$tmp/qkv.safetensors" "$tmp/qkvo.safetensors" \
                model.layers.1.self_attn.o_proj.bias 16 0.125 &&
            rm -rf "$tmp/qwen2" &&
            "$BIN" $base $llama --weights "$tmp/qkvo.safetensors" --export-weights "$tmp/qwen2" \
                >/dev/null 2>&1 &&
            ! grep -q '"model_type"' "$tmp/qwen2/config.json"
    }
    check "Qwen2's q, k and v biases name qwen2, and --hf-config of the export reads it back" \
        qwen2_biases
fi

# GPT-2's names and layouts (Conv1D, q | k | v fused by columns, zero biases, unit LN gains, a
# mask buffer, embeddings beside the block) hold the same weights: the same document with the
# orthonormal input chosen (the table, named as not read then, is the embedding input's:
# tests/cli/hf-forward.sh).
gpt2_same() { # norm settings
    local dir=$tmp/g
    rm -rf "$dir"
    # shellcheck disable=SC2086
    # The table's V = 7 rows and wpe are the document's vocab and positions (unused here).
    "$BIN" $base $2 --vocab 7 --positions learned --export-weights "$dir" >"$tmp/g.json" 2>/dev/null &&
        "$PY" $tool gpt2 "$dir/model.safetensors" "$tmp/gpt2.safetensors" "$1" &&
        "$BIN" $base $2 --input orthonormal --weights "$tmp/gpt2.safetensors" >"$tmp/g2.json" 2>"$tmp/g.err" &&
        same_measures "$tmp/g.json" "$tmp/g2.json" &&
        grep -q "the embedding table transformer.wte.weight + transformer.wpe.weight is read by the embedding input" "$tmp/g.err" &&
        grep -q "tensor 'transformer.ln_f.weight' is outside the block" "$tmp/g.err" &&
        ! grep -q "attn.bias'" "$tmp/g.err"
}
if "$PY" -c 'import struct, json' 2>/dev/null; then
    check "GPT-2 names, LayerNorm: the same document" gpt2_same ln "--heads 2 --mlp gelu --wo gaussian -n ln --ln-place pre"
    check "GPT-2 names, grouped keys and values, RMSNorm: the same document" gpt2_same rms "--heads 4 --kv-heads 2 --mlp relu --wo orthogonal -n rms"
    # shellcheck disable=SC2086
    check "GPT-2 names with a gated MLP: refused, naming what GPT-2 has no tensor for" refused \
        "GPT-2's names have no tensor for a gated MLP's up projection" -- \
        "$BIN" $base --heads 4 --kv-heads 2 --mlp swiglu --wo orthogonal -n rms --weights "$tmp/gpt2.safetensors"
    "$PY" $tool set "$tmp/gpt2.safetensors" "$tmp/bias.safetensors" transformer.h.1.mlp.c_fc.bias 3 0.25
    # shellcheck disable=SC2086
    check "a nonzero GPT-2 bias is read, and re-exported under Llama's names bit for bit" \
        trained_read "$tmp/bias.safetensors" "$tmp/g.json" $base --heads 4 --kv-heads 2 --mlp relu --wo orthogonal -n rms --input orthonormal --vocab 7 --positions learned
    # shellcheck disable=SC2086
    check "GPT-2 names under peri-LN: refused, naming the second norm GPT-2 has no tensor for" refused \
        "GPT-2's names have no tensor for peri-LN's second norm" -- \
        "$BIN" $base --heads 4 --kv-heads 2 --mlp relu --wo orthogonal -n rms --ln-place peri --weights "$tmp/gpt2.safetensors"
fi

# A Llama model's whole checkpoint: its norms' gains are read (unit ones as none at all), the
# tensors after the block (final norm, output head) named as unused, and the embedding table as
# not read by the orthonormal input chosen.
# shellcheck disable=SC2086
llama_whole() {
    local dir=$tmp/l settings="--heads 4 --kv-heads 2 --mlp swiglu --qk-norm head -n rms --ln-place pre --rope half"
    rm -rf "$dir"
    "$BIN" $base $settings --vocab 7 --export-weights "$dir" >"$tmp/l.json" 2>/dev/null &&
        grep -aq '"model.layers.2.post_attention_layernorm.weight"' "$dir/model.safetensors" &&
        "$PY" $tool whole-model "$dir/model.safetensors" "$tmp/whole.safetensors" &&
        "$BIN" $base $settings --input orthonormal --weights "$tmp/whole.safetensors" >"$tmp/l2.json" 2>"$tmp/l.err" &&
        same_measures "$tmp/l.json" "$tmp/l2.json" &&
        [ "$(grep -c 'is outside the block' "$tmp/l.err")" -eq 2 ] &&
        grep -q "the embedding table model.embed_tokens.weight is read by the embedding input" "$tmp/l.err" &&
        "$PY" $tool set "$dir/model.safetensors" "$tmp/gain2.safetensors" model.layers.1.input_layernorm.weight 0 1.5 &&
        trained_read "$tmp/gain2.safetensors" "$tmp/l.json" $base $settings
}
check "a whole Llama checkpoint: norms' gains read, the rest named unused, the same document" llama_whole
# Older Llama checkpoints save each layer's rotary inverse frequencies: skipped as transformers
# skips them (the same document, nothing said); another tensor beside them is still refused.
inv_freq_skipped() {
    local settings="--heads 4 --kv-heads 2 --mlp swiglu --qk-norm head -n rms --ln-place pre --rope half"
    "$PY" $tool add "$tmp/whole.safetensors" "$tmp/inv0.safetensors" model.layers.0.self_attn.rotary_emb.inv_freq 2 1 &&
        "$PY" $tool add "$tmp/inv0.safetensors" "$tmp/inv1.safetensors" model.layers.1.self_attn.rotary_emb.inv_freq 2 0.01 &&
        "$PY" $tool add "$tmp/inv1.safetensors" "$tmp/inv.safetensors" model.layers.2.self_attn.rotary_emb.inv_freq 2 0.01 &&
        # shellcheck disable=SC2086
        "$BIN" $base $settings --input orthonormal --weights "$tmp/inv.safetensors" >"$tmp/inv.json" 2>"$tmp/inv.err" &&
        cmp -s <(without_weights "$tmp/l2.json") <(without_weights "$tmp/inv.json") && ! grep -q inv_freq "$tmp/inv.err"
}
check "a Llama checkpoint with rotary_emb.inv_freq per layer: skipped, the same document" inv_freq_skipped
"$PY" $tool add "$tmp/inv.safetensors" "$tmp/inv-more.safetensors" model.layers.0.self_attn.rotary_emb.scale 2 1
# shellcheck disable=SC2086
check "another tensor beside inv_freq: still refused" refused \
    "tensor 'model.layers.0.self_attn.rotary_emb.scale' is not a weight of this configuration" -- \
    "$BIN" $base --heads 4 --kv-heads 2 --mlp swiglu --qk-norm head -n rms --ln-place pre --rope half --input orthonormal --weights "$tmp/inv-more.safetensors"

# A directory's config.json states the model: the same tensors read with other heads or
# another width are refused, naming the key and the option (either spelling of the key).
# shellcheck disable=SC2086
check "config.json's heads: --heads 4 on the same shapes is refused" refused \
    "'$tmp/w/config.json': num_attention_heads is 2, but the settings give 4 (--heads)" -- \
    "$BIN" $base --heads 4 --mlp gelu --wo gaussian --weights "$tmp/w"
mkdir "$tmp/gpt2"
cp "$tmp/w/model.safetensors" "$tmp/gpt2/"
printf '{"n_embd": 32, "n_head": 2}' >"$tmp/gpt2/config.json"
# shellcheck disable=SC2086
check "config.json's n_embd (GPT-2's spelling) names the width" refused \
    "'$tmp/gpt2/config.json': n_embd is 32, but the settings give 16 (--width)" -- \
    "$BIN" $base $A --weights "$tmp/gpt2"
# ... naming what gave the setting: the file of --hf-config, or nothing (the default).
printf '{"model_type": "llama", "hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 3, "intermediate_size": 64}' >"$tmp/hf16.json"
check "... naming --hf-config's file and field where they gave the width" refused \
    "'$tmp/gpt2/config.json': n_embd is 32, but the settings give 16 (--hf-config $tmp/hf16.json's hidden_size)" -- \
    "$BIN" --batch -T 12 --hf-config "$tmp/hf16.json" --weights "$tmp/gpt2"
check "... and the default where nothing gave it" refused \
    "'$tmp/gpt2/config.json': n_embd is 32, but the settings give 256 (--width's default)" -- \
    "$BIN" --batch -T 12 -L 3 --weights "$tmp/gpt2"
check "... and the option given after --hf-config" refused \
    "'$tmp/gpt2/config.json': n_embd is 32, but the settings give 16 (--width)" -- \
    "$BIN" --batch -T 12 -d 64 --hf-config "$tmp/hf16.json" -d 16 --weights "$tmp/gpt2"
# head_dim's width comes from --head-dim where it is set, else from d/H: the message names which.
mkdir "$tmp/hd"
cp "$tmp/w/model.safetensors" "$tmp/hd/"
printf '{"hidden_size": 16, "num_attention_heads": 2, "head_dim": 4}' >"$tmp/hd/config.json"
# shellcheck disable=SC2086
check "config.json's head_dim against d/H: names --heads" refused \
    "'$tmp/hd/config.json': head_dim is 4, but the settings give 8 (--heads)" -- \
    "$BIN" $base $A --weights "$tmp/hd"
# shellcheck disable=SC2086
check "config.json's head_dim against --head-dim 8: names --head-dim" refused \
    "'$tmp/hd/config.json': head_dim is 4, but the settings give 8 (--head-dim)" -- \
    "$BIN" $base $A --head-dim 8 --weights "$tmp/hd"
printf '{"n_embd": 16,' >"$tmp/gpt2/config.json"
# shellcheck disable=SC2086
check "a malformed config.json is named" refused "'$tmp/gpt2/config.json': JSON byte 15" -- \
    "$BIN" $base $A --weights "$tmp/gpt2"
rm "$tmp/gpt2/config.json"
mkdir "$tmp/gpt2/config.json"
# shellcheck disable=SC2086
check "a config.json that is a directory is named as one" refused \
    "'$tmp/gpt2/config.json': Is a directory" -- "$BIN" $base $A --weights "$tmp/gpt2"
# A FIFO where a file of the checkpoint should be is refused at once, never waited on (a
# blocking open would wait for a writer for ever: timeout's 124 fails the check).
rmdir "$tmp/gpt2/config.json"
mkfifo "$tmp/gpt2/config.json"
# shellcheck disable=SC2086
check "a FIFO config.json: refused at once" refused \
    "'$tmp/gpt2/config.json': a FIFO, not a regular file" -- \
    timeout 10 "$BIN" $base $A --weights "$tmp/gpt2"
mkdir "$tmp/fifos"
mkfifo "$tmp/fifos/model.safetensors.index.json" "$tmp/fifos/model.safetensors" "$tmp/fifos/shard"
# shellcheck disable=SC2086
check "a FIFO index: refused at once" refused \
    "'$tmp/fifos/model.safetensors.index.json': a FIFO, not a regular file" -- \
    timeout 10 "$BIN" $base $A --weights "$tmp/fifos"
rm "$tmp/fifos/model.safetensors.index.json"
# shellcheck disable=SC2086
check "a FIFO model.safetensors: refused at once" refused \
    "'$tmp/fifos/model.safetensors': a FIFO, not a regular file" -- \
    timeout 10 "$BIN" $base $A --weights "$tmp/fifos"
# shellcheck disable=SC2086
check "--weights naming a FIFO: refused at once" refused \
    "'$tmp/fifos/shard': a FIFO, not a regular file" -- \
    timeout 10 "$BIN" $base $A --weights "$tmp/fifos/shard"
rm "$tmp/fifos/model.safetensors"
printf '{"weight_map": {"model.layers.0.self_attn.q_proj.weight": "shard"}}' \
    >"$tmp/fifos/model.safetensors.index.json"
# shellcheck disable=SC2086
check "an index naming a FIFO shard: refused at once" refused \
    "'$tmp/fifos/shard': a FIFO, not a regular file" -- \
    timeout 10 "$BIN" $base $A --weights "$tmp/fifos"

rm "$tmp/fifos/shard"
cp "$tmp/w/model.safetensors" "$tmp/fifos/shard"
# shellcheck disable=SC2086
check "--weights naming the shard index itself: refused, naming its directory" refused \
    "'$tmp/fifos/model.safetensors.index.json': a shard index: give its directory, '$tmp/fifos'" -- \
    "$BIN" $base $A --weights "$tmp/fifos/model.safetensors.index.json"

# The export: into a directory that is not one, nothing is written; over an earlier export,
# the new files replace the old and other files stay; no staging file is left.
touch "$tmp/file"
check "--export-weights into a file: refused" refused "--export-weights '$tmp/file': it exists and is not a directory" -- \
    "$BIN" $base --export-weights "$tmp/file"
echo keep >"$tmp/w/notes.txt"
# shellcheck disable=SC2086
"$BIN" $base $A --seed 9 --export-weights "$tmp/w" >/dev/null 2>&1
check "re-export: replaced, other files kept, no staging left" bash -c "[ \"\$(cat '$tmp/w/notes.txt')\" = keep ] && [ -z \"\$(ls -A '$tmp/w' | grep -v -x -e model.safetensors -e config.json -e notes.txt)\" ] && grep -q '\"seed\":9' '$tmp/w/config.json'"
check "config.json: HF's names and attnscope's settings" "$PY" -c "
import json; c = json.load(open('$tmp/w/config.json'))
assert (c['hidden_size'], c['num_attention_heads'], c['num_hidden_layers'], c['intermediate_size'], c['hidden_act']) == (16, 2, 3, 64, 'gelu'), c
assert c['attnscope']['T'] == 12 and c['attnscope']['seed'] == 9"
# The rotary scaling under HF's names, as transformers reads rope_scaling.
scaled_config() { # settings... -- expected rope_scaling (Python)
    local settings=()
    while [ "$1" != -- ]; do settings+=("$1"); shift; done
    "$BIN" -T 12 -d 16 --rope half "${settings[@]}" --export-weights "$tmp/scaled" >/dev/null 2>&1 &&
        "$PY" -c "
import json; c = json.load(open('$tmp/scaled/config.json'))
assert c.get('rope_scaling') == $2, c.get('rope_scaling')"
}
check "config.json: llama3's rope_scaling" scaled_config --rope-scaling llama3 --rope-factor 32 \
    --rope-original-context 64 -- "{'rope_type': 'llama3', 'factor': 32, 'low_freq_factor': 1, 'high_freq_factor': 4, 'original_max_position_embeddings': 64}"
check "config.json: linear's rope_scaling" scaled_config --rope-scaling linear --rope-factor 2.5 -- \
    "{'rope_type': 'linear', 'factor': 2.5}"
check "config.json: no rope_scaling unscaled" scaled_config -- None
check "without --batch: exit 0 after the export, nothing on stdout" bash -c "'$BIN' -T 12 -d 16 --export-weights '$tmp/only' >'$tmp/out' 2>/dev/null && [ ! -s '$tmp/out' ] && [ -s '$tmp/only/model.safetensors' ]"
check "--export-dtype without --export-weights" refused "--export-dtype: accepted only with --export-weights DIR" -- \
    "$BIN" --batch --export-dtype f32
check "--export-dtype f8" refused "--export-dtype 'f8': accepted f64, f32 or bf16" -- \
    "$BIN" --batch --export-dtype f8 --export-weights "$tmp/x"
check "--weights with --jsonl" refused "--weights '$tmp/w': accepted only without --jsonl" -- \
    "$BIN" --batch --jsonl --weights "$tmp/w"
# The export's config.json states the run's window as Hugging Face's configs do: sliding_window in
# keys (--window w: w + 1) and each layer's kind (--window-layers LLG: two local, one global);
# a local θ alone marks its layers the same way, over a window of the whole context; no window:
# null (Mistral's default of 4096 would otherwise act).
window_fields() { # window layer_types... -- settings...
    local window=$1 types=()
    shift
    while [ "$1" != -- ]; do types+=("$1") && shift; done
    shift
    rm -rf "$tmp/wf"
    "$BIN" -T 8 -d 8 "$@" --export-weights "$tmp/wf" >/dev/null 2>"$tmp/err" &&
        "$PY" - "$tmp/wf/config.json" "$window" "${types[@]}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
want = None if sys.argv[2] == "null" else int(sys.argv[2])
kinds = {"L": "sliding_attention", "G": "full_attention"}
types = [kinds[k] for k in sys.argv[3:]] or None
sys.exit(0 if c["sliding_window"] == want and c.get("layer_types") == types else 1)
PY
}
check "export: --window 3 over LLG layers: sliding_window 4, layer_types LLGLLG" window_fields \
    4 L L G L L G -- -L 6 --mask window-causal --window 3 --window-layers LLG
check "export: a local θ over LLG layers without a window mask: the context's window, LLG" \
    window_fields 8 L L G -- -L 3 --rope half --rope-local-base-freq 10000 --window-layers LLG
check "export: no window: sliding_window null, no layer_types" window_fields null -- -L 2
check "--weights with --sweep-T" refused "--weights '$tmp/w': accepted only without --sweep-T" -- \
    "$BIN" --batch --sweep-T --weights "$tmp/w"
check "--weights with grid" refused "grid: --weights is not accepted" -- \
    "$BIN" grid 'T=8,16' --weights "$tmp/w"
finish
