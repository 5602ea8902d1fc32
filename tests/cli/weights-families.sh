#!/bin/bash
# What a checkpoint's family decides, and the families' layouts beyond Llama's names:
# - a Gemma checkpoint's config.json decides both of what its tensors' names cannot say, the
#   table's scale and the norms' gain offset (1 + w), without --hf-config; an option against
#   the family is kept and warned about; its export names the family only where --hf-config
#   of the written config.json reads the run back, else keeps it as "tensors_family";
# - gpt-oss's mixture of experts (router, experts, the norm before them) is skipped with a
#   warning naming it where the settings have no MLP, and the document is the attention path's
#   own; with an MLP the block would read, nothing is skipped;
# - a multimodal Gemma 3's text model is read under language_model. and model.language_model.,
#   its vision tower warned about, the sizes of its text_config checked;
# - refusals that name their cause: a shape with the sizes and what set them (--hf-config's
#   file and field), a tensor the setting in force leaves out with the value that reads it, a
#   shard the index names that is not there.
# The checkpoints are attnscope's own exports changed by tests/cli/safetensors_tool.py.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tool=tests/cli/safetensors_tool.py

# The documents of two runs, but for the config (which names the checkpoint and its table)
# and the checkpoint's identity, number for number.
same_numbers() { # stem stem
    "$PY" - "$tmp/$1.json" "$tmp/$2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("config")
    d.pop("warnings")
    d.pop("weights")
sys.exit(0 if a == b else 1)
PY
}
# stem key value: the document's config[key] is value (JSON).
config_is() {
    "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))["config"]
v = d.get(sys.argv[2])
sys.exit(0 if v == json.loads(sys.argv[3]) else print("  %s = %r" % (sys.argv[2], v)) or 1)' \
        "$tmp/$1.json" "$2" "$3"
}

# ---- Gemma: the family from the checkpoint's config.json decides the gain offset too.
gemma="-T 8 -d 16 -L 2 --heads 2 --kv-heads 1 -n rms --ln-place peri --mlp geglu --mlp-hidden 24"
ids=$tmp/ids.txt
printf '%s\n' 3 1 4 1 5 2 6 0 >"$ids"
# shellcheck disable=SC2086
"$BIN" --batch $gemma --norm-gain-offset 1 --export-weights "$tmp/g" >/dev/null 2>&1
# Gains w = 0.5 (1.5 as 1 + w, 0.5 as w), and a table of 7 rows.
for l in 0 1; do
    for n in input_layernorm post_attention_layernorm pre_feedforward_layernorm post_feedforward_layernorm; do
        "$PY" $tool fill "$tmp/g/model.safetensors" "$tmp/g/model.safetensors" "model.layers.$l.$n.weight" 0.5
    done
done
"$PY" $tool whole-model "$tmp/g/model.safetensors" "$tmp/g/model.safetensors"
"$PY" - "$tmp/g/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model_type"] = "gemma2"
json.dump(c, open(sys.argv[1], "w"))
PY
# shellcheck disable=SC2086
check "a gemma2 checkpoint without --hf-config: its table scaled and its gains read as 1 + w, as --norm-gain-offset 1 reads them" \
    eval 'batch_document "$tmp/gemma-family" $gemma --weights "$tmp/g" --token-ids "$ids" &&
        batch_document "$tmp/gemma-given" $gemma --norm-gain-offset 1 --weights "$tmp/g" --token-ids "$ids" &&
        same_numbers gemma-family gemma-given && config_is gemma-family norm_gain_offset 1 &&
        config_is gemma-family input_source "\"$ids in model.embed_tokens.weight scaled by sqrt(16) (gemma2)\""'
# shellcheck disable=SC2086
check "... and --norm-gain-offset 0 is kept, other numbers, with a warning that the run is not gemma2's model" \
    eval 'batch_document "$tmp/gemma-0" $gemma --norm-gain-offset 0 --weights "$tmp/g" --token-ids "$ids" &&
        ! same_numbers gemma-family gemma-0 && config_is gemma-0 norm_gain_offset 0 &&
        grep -qF "the checkpoint'"'"'s family, gemma2 (its config.json), stores its norms'"'"' gains for N(x)·(1 + w), but --norm-gain-offset 0 (from --norm-gain-offset) reads them as 0 + w" "$tmp/gemma-0.err"'
"$PY" -c 'import json, sys
c = json.load(open(sys.argv[1])); c["model_type"] = "llama"; json.dump(c, open(sys.argv[2], "w"))' \
    "$tmp/g/config.json" "$tmp/llama.json"
# shellcheck disable=SC2086
check "... and so is the gain offset --hf-config's file chose (llama's 0, its default), the warning naming the file and field" \
    eval 'batch_document "$tmp/gemma-llama" -T 8 --hf-config "$tmp/llama.json" $gemma --wo identity --weights "$tmp/g" --token-ids "$ids" &&
        config_is gemma-llama norm_gain_offset 0 &&
        grep -qF "but --norm-gain-offset 0 (from --hf-config $tmp/llama.json'"'"'s model_type) reads them as 0 + w" "$tmp/gemma-llama.err"'
# The export of a Gemma checkpoint names its family only where --hf-config of the written
# config.json reads the run back: with Gemma 2's block it names gemma2; with -g center (a gap
# removal no family's model has) it names no model_type and keeps "tensors_family": "gemma2"
# under "attnscope", which --weights reads in model_type's place, so that the export reads back
# scaled with gains 1 + w: the document of the checkpoint's own.
gemma2="$gemma --rope half --skip plain --ln-scale sqrt-d --wo gaussian -m causal --norm-gain-offset 1"
# shellcheck disable=SC2086
"$BIN" --batch $gemma2 --export-weights "$tmp/g2" >/dev/null 2>&1
"$PY" $tool whole-model "$tmp/g2/model.safetensors" "$tmp/g2/model.safetensors"
gemma_export() { # stem options...
    local stem=$1
    shift
    rm -rf "$tmp/$stem"
    # shellcheck disable=SC2086
    batch_document "$tmp/$stem-a" $gemma2 "$@" --weights "$tmp/g2" --token-ids "$ids" \
        --export-weights "$tmp/$stem" &&
        batch_document "$tmp/$stem-b" $gemma2 "$@" --weights "$tmp/$stem" --token-ids "$ids" &&
        same_numbers "$stem-a" "$stem-b" && config_is "$stem-b" norm_gain_offset 1 &&
        config_is "$stem-b" input_source "\"$ids in model.embed_tokens.weight scaled by sqrt(16) (gemma2)\""
}
check "a gemma2 checkpoint with Gemma 2's block exported: gemma2, read back the same" \
    eval 'gemma_export gn && grep -qF "\"model_type\": \"gemma2\"," "$tmp/gn/config.json" &&
        ! grep -q tensors_family "$tmp/gn/config.json"'
check "... with -g center: no model_type, its family kept for --weights, read back the same" \
    eval 'gemma_export gc -g center && ! grep -q "\"model_type\"" "$tmp/gc/config.json" &&
        grep -qF "\"tensors_family\":\"gemma2\"" "$tmp/gc/config.json" &&
        grep -qF "attnscope: warning: --export-weights '"'"'$tmp/gc'"'"': config.json names no model_type: the checkpoint'"'"'s family, gemma2," "$tmp/gc-a.err"'

# ---- gpt-oss: its attention path, the mixture of experts beside it skipped and named.
oss="-T 8 -d 16 -L 2 --heads 2 --kv-heads 1 -n rms --ln-place pre --sink 0 --wo gaussian --mlp none"
# shellcheck disable=SC2086
"$BIN" --batch $oss --export-weights "$tmp/oss" >/dev/null 2>&1
mkdir "$tmp/oss-moe"
"$PY" $tool gpt-oss "$tmp/oss/model.safetensors" "$tmp/oss-moe/model.safetensors"
# shellcheck disable=SC2086
check "gpt-oss with its experts: read, the document the attention path's own" \
    eval 'batch_document "$tmp/oss" $oss --weights "$tmp/oss" && batch_document "$tmp/oss-moe" $oss --weights "$tmp/oss-moe" &&
        same_numbers oss oss-moe'
check "... the 14 tensors of the experts named in one warning" \
    grep -qF "14 tensors of the layers' mixture of experts (model.layers.N.: post_attention_layernorm.weight, mlp.router.weight, mlp.router.bias, mlp.experts.gate_up_proj, mlp.experts.gate_up_proj_bias, mlp.experts.down_proj, mlp.experts.down_proj_bias) are outside the block attnscope runs (the block has no mixture of experts: --mlp none, its attention path), so they are not used" "$tmp/oss-moe.err"
# shellcheck disable=SC2086
check "... but not with an MLP the block would read: its tensors are asked for" \
    refused "no tensor 'model.layers.0.mlp.gate_proj.weight'" -- \
    "$BIN" --batch ${oss% --mlp none} --mlp swiglu --mlp-hidden 16 --weights "$tmp/oss-moe"

# ---- Gemma 3 multimodal: the text model under its two prefixes, the vision tower beside it.
# shellcheck disable=SC2086
"$BIN" --batch $gemma --norm-gain-offset 1 --qk-norm head --export-weights "$tmp/g3" >/dev/null 2>&1
"$PY" $tool whole-model "$tmp/g3/model.safetensors" "$tmp/g3/model.safetensors"
"$PY" - "$tmp/g3/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model_type"] = "gemma3_text"
json.dump(c, open(sys.argv[1], "w"))
PY
# shellcheck disable=SC2086
batch_document "$tmp/g3" $gemma --norm-gain-offset 1 --qk-norm head --weights "$tmp/g3" --token-ids "$ids"
for layout in OLD NEW; do
    mkdir "$tmp/mm-$layout"
    "$PY" $tool gemma3-mm "$tmp/g3/model.safetensors" "$tmp/mm-$layout/model.safetensors" $layout
    "$PY" - "$tmp/g3/config.json" "$tmp/mm-$layout/config.json" <<'PY'
import json, sys
text = json.load(open(sys.argv[1]))
json.dump({"model_type": "gemma3", "text_config": text, "vision_config": {"hidden_size": 4}},
          open(sys.argv[2], "w"))
PY
    table=language_model.model.embed_tokens.weight
    [ $layout = NEW ] && table=model.language_model.embed_tokens.weight
    # shellcheck disable=SC2086
    check "Gemma 3 multimodal ($layout names): the text model's document, its table scaled, gains 1 + w from the family" \
        eval 'batch_document "$tmp/mm-$layout" $gemma --qk-norm head --weights "$tmp/mm-$layout" --token-ids "$ids" &&
            same_numbers g3 mm-$layout && config_is mm-$layout norm_gain_offset 1 &&
            config_is mm-$layout input_source "\"$ids in $table scaled by sqrt(16) (gemma3)\""'
    check "... the vision tower named in one warning" \
        grep -qF "3 tensors beside the text model (" "$tmp/mm-$layout.err"
done
"$PY" -c 'import json, sys
c = json.load(open(sys.argv[1])); c["text_config"]["num_attention_heads"] = 4
json.dump(c, open(sys.argv[1], "w"))' "$tmp/mm-NEW/config.json"
# shellcheck disable=SC2086
check "... its text_config's sizes are the settings'" \
    refused "config.json': num_attention_heads is 4, but the settings give 2 (--heads)" -- \
    "$BIN" --batch $gemma --qk-norm head --weights "$tmp/mm-NEW"

# ---- Refusals that name their cause.
"$PY" -c 'import json, sys
c = json.load(open(sys.argv[1])); c["num_attention_heads"] = 4; c.pop("head_dim", None)
c.pop("attnscope", None); c["model_type"] = "llama"
json.dump(c, open(sys.argv[2], "w"))' "$tmp/oss/config.json" "$tmp/oss-moe/config.json"
check "a shape refused names the sizes and what set them: --hf-config's file and field" \
    refused "tensor 'model.layers.0.self_attn.k_proj.weight' has shape [8, 16], expected [4, 16] for this configuration: d = 16 (--hf-config $tmp/oss-moe/config.json's hidden_size), H = 4 (--hf-config $tmp/oss-moe/config.json's num_attention_heads), G = 1 (--hf-config $tmp/oss-moe/config.json's num_key_value_heads), d_h = 4 (d/H)" -- \
    "$BIN" --batch -T 8 --hf-config "$tmp/oss-moe" --mlp none --sink 0 --weights "$tmp/oss/model.safetensors"
check "a tensor --wo identity leaves out: the setting in force and the value that reads it" \
    refused "tensor 'model.layers.0.self_attn.o_proj.weight' is not a weight of this configuration: --wo identity (from --wo) has no such tensor: give --wo gaussian to read it" -- \
    "$BIN" --batch $oss --wo identity --weights "$tmp/oss"
"$PY" $tool shard "$tmp/oss/model.safetensors" "$tmp/shards"
rm "$tmp/shards/model-00002-of-00002.safetensors"
check "a shard the index names that is not there: the index, the shard and a tensor it holds" \
    refused "'$tmp/shards/model.safetensors.index.json' names shard 'model-00002-of-00002.safetensors' for tensor 'model.layers." -- \
    "$BIN" --batch $oss --weights "$tmp/shards"
finish
