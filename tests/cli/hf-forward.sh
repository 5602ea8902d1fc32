#!/bin/bash
# A checkpoint written by numpy (tests/cli/hf_forward.py: a 2-layer GPT-2, a 2-layer
# Qwen3-shaped Llama-family model, a 2-layer Llama 3.2 shape with its llama3 rotary scaling
# read by --hf-config, and a 2-layer ViT, F64, F32 and BF16, one of each sharded; a 2-layer
# Gemma 2, whose embedding rows are scaled by sqrt(hidden_size), F64 and BF16; a 3-layer
# Gemma 3 whose local and global layers rotate with their own frequencies; two Qwen3
# shapes whose heads do not split d = 40 (--head-dim), where X_ℓ is numpy's too; a 2-layer
# Phi-3 with fused qkv_proj and gate_up_proj, read by --hf-config, F64, F32, F16 and BF16, to
# 1e-12 with X_ℓ, its export round trip and its fused tensors' refusals; attnscope's own
# export of drawn weights with GPT-2's and ViT's blocks, under their names) and
# a token-id file (ViT: the input drawn from the seed, exported as input.csv): attnscope's
# attention matrices, every layer and head, equal numpy's own forward of the Hugging Face block
# on the same input to 1e-9 relative.  Then the input's other ways and refusals: random ids from
# the seed over the table's rows, V and the positions the table fixes, the model's context, ids
# the table has no row for; a ViT checkpoint short of a tensor or with one of another shape.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
forward=tests/cli/hf_forward.py

skip_script_without_numpy "the independent forward"

same_as_numpy() { # model dtype layout
    local dir=$tmp/$1-$2-$3
    mkdir "$dir" && /usr/bin/python3 $forward "$BIN" "$dir" "$@" 2>"$dir.err"
}
for model in gpt2 qwen3 llama32 vit; do
    for dtype in F64 F32 BF16; do
        layout=single
        { [ $model = gpt2 ] && [ $dtype = F32 ]; } || { [ $model = qwen3 ] && [ $dtype = BF16 ]; } ||
            { [ $model = vit ] && [ $dtype = F64 ]; } || { [ $model = llama32 ] && [ $dtype = F32 ]; } &&
            layout=sharded
        check "$model $dtype $layout: every layer's and head's attention is numpy's" same_as_numpy $model $dtype $layout
    done
done
# attnscope's own export of drawn weights whose block is GPT-2's (ViT's) is written under that
# family's names (GPT2Model's Conv1D c_attn, q | k | v by columns; ViTModel's, "qkv_bias":
# false) with model_type gpt2 (vit): read back by --weights with --hf-config of its config.json,
# every attention is numpy's forward of the family's block from the file's bytes.
for export in "gpt2-export F64" "gpt2-export BF16" "vit-export F32"; do
    # shellcheck disable=SC2086
    check "${export% *} ${export#* }: the family's names and layout, every attention numpy's" \
        same_as_numpy $export single
done
# Gemma 2's family from --hf-config (--weights names the .safetensors file), or from the
# config.json in --weights' directory (the settings as options, but for --norm-gain-offset:
# the family decides the gains' 1 + w as it decides the table's scale).
check "gemma2 F64 single: the table's rows times sqrt(24), then every layer's attention is numpy's" \
    same_as_numpy gemma2 F64 single
check "gemma2 BF16 sharded: the same with the family from the checkpoint's config.json (the scale and gains 1 + w)" \
    same_as_numpy gemma2 BF16 sharded
# Gemma 3 read by --hf-config: its sliding layers (1 and 2 of every 3) turn by
# rope_local_base_freq unscaled, its full ones by rope_theta with the linear rope_scaling, each
# layer against numpy's own rotation; with the window covering T (every layer causal) too.
# Nothing about the rotation is named as not modelled.
gemma3_as_numpy() { # model dtype layout
    same_as_numpy "$@" && ! grep -q 'rope' "$tmp/$1-$2-$3.err"
}
check "gemma3 F64 single: local layers at their own theta, the global one scaled: numpy's, no rope warning" \
    gemma3_as_numpy gemma3 F64 single
check "gemma3-wide-window F32 sharded: the same where the window covers T (every layer causal)" \
    gemma3_as_numpy gemma3-wide-window F32 sharded
# Heads whose width does not split d (--head-dim): two of 16 and four of 12 (two key/value
# heads) at d = 40; X_ℓ's numbers too (hf_forward.py).
check "qwen3-wide F64 single (H·d_h = 32, d = 40): every attention and X_ℓ is numpy's" \
    same_as_numpy qwen3-wide F64 single
check "qwen3-wide-gqa F32 sharded (H·d_h = 48, G = 2, d = 40): every attention and X_ℓ is numpy's" \
    same_as_numpy qwen3-wide-gqa F32 sharded

refused() { refused_running "$BIN" --batch -- "$@"; } # message -- args...
# Phi-3 (model_type phi3, its settings from the checkpoint's config.json): the fused tensors
# split by rows, 3/4 of each head turned, every layer's window; attention and X_ℓ to 1e-12.
for dtype in F64 F32 F16 BF16; do
    layout=single
    { [ $dtype = F32 ] || [ $dtype = F16 ]; } && layout=sharded
    check "phi3 $dtype $layout: qkv_proj and gate_up_proj split, every attention and X_ℓ is numpy's" \
        same_as_numpy phi3 $dtype $layout
done
# --weights A --export-weights B of a Phi-3 checkpoint writes Phi-3's fused names (transformers'
# Phi3 loads no others) and model_type phi3: B holds A's block tensors, value for value, under
# A's names, and --weights B gives A's document bit for bit (but for "weights", which names
# the checkpoint run: without_weights).
phi3_round_trip() { # checkpoint
    local ck=$1 out=$tmp/rt-phi3 m
    m=$(dirname "$1")
    "$BIN" --batch -T 14 --hf-config "$ck" --weights "$ck" --token-ids "$m/ids.txt" \
        --export-weights "$out" >"$out.a.json" 2>/dev/null &&
        "$BIN" --batch -T 14 --hf-config "$ck" --weights "$out" --token-ids "$m/ids.txt" \
            >"$out.b.json" 2>/dev/null && [ -s "$out.b.json" ] &&
        cmp -s <(without_weights "$out.a.json") <(without_weights "$out.b.json") &&
        grep -qF '"model_type": "phi3",' "$out/config.json" &&
        grep -qF '"partial_rotary_factor": 0.75,' "$out/config.json" &&
        /usr/bin/python3 - "$ck" "$out/model.safetensors" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
import numpy as np
from hf_forward import checkpoint_tensors
a, b = checkpoint_tensors(sys.argv[1]), checkpoint_tensors(sys.argv[2])
block = set(a) - {"model.norm.weight", "lm_head.weight"}
sys.exit(0 if set(b) == block and all(np.array_equal(a[n], b[n]) for n in b) else 1)
PY
}
check "phi3: the export keeps qkv_proj and gate_up_proj and reads back to its document bit for bit" \
    phi3_round_trip "$tmp/phi3-F32-sharded/checkpoint"
# The checkpoint's family names the export only where --hf-config of the written config.json
# reads the run back, as every family does: transformers' Phi3 slides sliding_window on every
# layer (it reads no layer_types), so --window-layers 1:1 is not its block, nor is a gap removal
# (-g center).  Such an export names no model_type, says why on stderr and in config.json's
# "attnscope" record, keeps "tensors_family": "phi3" there (and the layer_types), and --weights
# of it (Phi-3's fused names) reads back the run's document bit for bit (but for "weights":
# without_weights); with the checkpoint's own settings, no warning.
phi3_unnamed() { # checkpoint options-after-the-file ("": none)
    local ck=$1 out=$tmp/ww-phi3 m said
    m=$(dirname "$1")
    said="config.json names no model_type: the checkpoint's family, phi3,"
    rm -rf "$out"
    # shellcheck disable=SC2086
    "$BIN" --batch -T 14 --hf-config "$ck" --weights "$ck" --token-ids "$m/ids.txt" \
        $2 --export-weights "$out" >"$out.a.json" 2>"$out.err" || return 1
    if [ -z "$2" ]; then
        ! grep -q "warning: --export-weights" "$out.err" && ! grep -q export_warning "$out/config.json" &&
            grep -qF '"model_type": "phi3",' "$out/config.json"
    else
        # shellcheck disable=SC2086
        grep -qF "attnscope: warning: --export-weights '$out': $said" "$out.err" &&
            grep -qF "\"export_warning\":\"$said" "$out/config.json" &&
            grep -qF '"tensors_family":"phi3"' "$out/config.json" &&
            ! grep -q '"model_type"' "$out/config.json" &&
            "$BIN" --batch -T 14 --hf-config "$ck" --weights "$out" --token-ids "$m/ids.txt" \
                $2 >"$out.b.json" 2>/dev/null && [ -s "$out.b.json" ] &&
            cmp -s <(without_weights "$out.a.json") <(without_weights "$out.b.json")
    fi
}
check "phi3 --window-layers 1:1 (transformers' Phi3 slides every layer): no model_type, read back the same" \
    phi3_unnamed "$tmp/phi3-F64-single/checkpoint" "--window-layers 1:1"
check "... and its layer_types kept" \
    grep -qF '"layer_types": ["sliding_attention", "full_attention"],' "$tmp/ww-phi3/config.json"
check "phi3 -g center: no model_type, read back the same" \
    phi3_unnamed "$tmp/phi3-F64-single/checkpoint" "-g center"
check "phi3 with its own settings: phi3, no warning" \
    phi3_unnamed "$tmp/phi3-F64-single/checkpoint" ""
# The export's own config.json (not the original's) gives the same settings, numbers and
# warnings: Phi-3's window on every layer (sliding_window 5, read as --window 4) kept, Gemma 3's
# local layers (layer_types) and d_h as its query_pre_attn_scalar (its default is 256), and no
# field of the export's own warned about (attnscope_version and the attnscope record).
exported_config_reads_back() { # checkpoint T
    local ck=$1 out m
    m=$(dirname "$1")
    out=$tmp/ec-$(basename "$m")
    "$BIN" --batch -T "$2" --hf-config "$ck" --weights "$ck" --token-ids "$m/ids.txt" \
        --export-weights "$out" >"$out.a.json" 2>/dev/null &&
        "$BIN" --batch -T "$2" --hf-config "$out/config.json" --weights "$out" \
            --token-ids "$m/ids.txt" >"$out.c.json" 2>/dev/null &&
        /usr/bin/python3 - "$out.a.json" "$out.c.json" <<'PY'
import json, sys
a, c = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, c):
    d["hf_config"].pop("file")
    d.pop("weights")  # the checkpoint run: another file
sys.exit(0 if a == c else 1)
PY
}
check "phi3: the export's config.json read back gives the same document (its window kept)" \
    exported_config_reads_back "$tmp/phi3-F32-sharded/checkpoint" 14
check "gemma3: the export's config.json read back gives the same document (local layers, scale)" \
    exported_config_reads_back "$tmp/gemma3-F64-single/checkpoint" 14
phi3=$tmp/phi3-F64-single/checkpoint
/usr/bin/python3 - "$phi3/model.safetensors" "$tmp" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import read, write
tensors, meta = read(sys.argv[1])
def short_by_a_row(name, out):
    row = lambda s: s[1] * 8  # F64 bytes of a row
    cut = [(n, t, [s[0] - 1, s[1]] if n == name else s, r[:-row(s)] if n == name else r)
           for n, t, s, r in tensors]
    write(sys.argv[2] + out, cut, meta)
short_by_a_row("model.layers.0.self_attn.qkv_proj.weight", "/phi3-qkv.safetensors")
short_by_a_row("model.layers.1.mlp.gate_up_proj.weight", "/phi3-gate-up.safetensors")
PY
P="-T 14 --hf-config $phi3"
# shellcheck disable=SC2086
check "phi3: a qkv_proj short of a row is refused, naming the fused tensor and both shapes" refused \
    "tensor 'model.layers.0.self_attn.qkv_proj.weight' has shape [63, 32], expected [64, 32] for this configuration" -- \
    $P --weights "$tmp/phi3-qkv.safetensors"
# shellcheck disable=SC2086
check "phi3: a gate_up_proj of odd rows is refused, naming the fused tensor and both shapes" refused \
    "tensor 'model.layers.1.mlp.gate_up_proj.weight' has shape [39, 32], expected [40, 32] for this configuration" -- \
    $P --weights "$tmp/phi3-gate-up.safetensors"
# shellcheck disable=SC2086
check "phi3: its names under a plain MLP are refused, naming what they lack" refused \
    "Phi-3's names have no tensor for a plain MLP's W1 (gate_up_proj fuses a gate and an up projection)" -- \
    $P --mlp gelu --weights "$phi3"
# shellcheck disable=SC2086
check "phi3: its names under post-LN are refused" refused \
    "Phi-3's names have no tensor for a norm after a branch" -- $P --ln-place post --weights "$phi3"

# --hf-config of such a checkpoint reads head_dim as its own setting (d stays hidden_size = 40,
# nothing named as not modelled) and --weights loads it: the attention of every head at layer
# 2 is the explicit settings' (hf_forward.py's, which numpy's forward checked) bit for bit.
hf_config_loads() { # model heads
    local dir=$tmp/$1-$2 ck m
    ck=$(ls -d "$tmp/$1"-*/checkpoint | head -1)
    m=$(dirname "$ck")
    for head in $(seq 1 "$2"); do
        "$BIN" --batch -T 20 --hf-config "$ck" --weights "$ck" --token-ids "$m/ids.txt" --layer 2 \
            --head "$head" --export "$dir-$head" --export-matrix >"$dir-$head.json" 2>/dev/null || return 1
        grep -qF '"d":40,' "$dir-$head.json" && grep -qF '"unmodelled": []' "$dir-$head.json" || return 1
        grep -v '^#' "$dir-$head/attention_matrix.csv" | cmp -s - <(grep -v '^#' "$m/export-2-$head/attention_matrix.csv") ||
            return 1
    done
}
check "--hf-config + --weights, qwen3-wide: head_dim read as --head-dim 16, d = 40, numpy's attention" \
    hf_config_loads qwen3-wide 2
check "--hf-config + --weights, qwen3-wide-gqa: --head-dim 12 over 2 key/value heads, the same" \
    hf_config_loads qwen3-wide-gqa 4

# input.csv says how the run made X0 (the ids' rows in the checkpoint's table, or orthonormal
# rows drawn from the seed), and its settings line, --weights and --token-ids among them, makes
# the same file again.
input_made_again() { # run what
    local csv=$tmp/$1/export-1-1/input.csv again=$tmp/$1/again settings
    settings=$(sed -n '2s/^# //p' "$csv")
    head -1 "$csv" | grep -qF "X0 (row i: token i's d entries), $2" &&
        # shellcheck disable=SC2086
        "$BIN" --batch $settings --export "$again" --export-matrix >/dev/null 2>&1 &&
        cmp -s "$csv" "$again/input.csv"
}
check "GPT-2's input.csv: wte's and wpe's rows for the ids, made again from its settings line" \
    input_made_again gpt2-F64-single \
    "the rows for $tmp/gpt2-F64-single/ids.txt in wte.weight + wpe.weight"
check "Qwen3's input.csv: the table's rows for the ids, made again from its settings line" \
    input_made_again qwen3-BF16-sharded \
    "the rows for $tmp/qwen3-BF16-sharded/ids.txt in model.embed_tokens.weight"
check "ViT's input.csv: orthonormal rows from the seed, made again from its settings line" \
    input_made_again vit-F64-sharded "orthonormal rows drawn from the seed"

# The same checkpoints without a token-id file: T ids drawn from the seed over the table's V.
gpt2=$tmp/gpt2-F64-single/checkpoint
qwen3=$tmp/qwen3-BF16-sharded/checkpoint
G="-L 2 -a softmax -m causal -k plain --ln-place pre --ln-scale sqrt-d --wo gaussian -d 16 --heads 2 -n ln --ln-eps 1e-05 --mlp gelu --mlp-hidden 64"
Q="-L 2 -a softmax -m causal -k plain --ln-place pre --ln-scale sqrt-d --wo gaussian -d 16 --heads 4 --kv-heads 2 -n rms --ln-eps 1e-06 --qk-norm head --rope half --rope-theta 10000 --mlp swiglu --mlp-hidden 24"
random_ids() {
    # shellcheck disable=SC2086
    "$BIN" --batch -T 24 $Q --weights "$qwen3" >"$tmp/r1.json" 2>/dev/null &&
        "$BIN" --batch -T 24 $Q --weights "$qwen3" >"$tmp/r1b.json" 2>/dev/null &&
        "$BIN" --batch -T 24 $Q --weights "$qwen3" --seed 2 >"$tmp/r2.json" 2>/dev/null &&
        cmp -s "$tmp/r1.json" "$tmp/r1b.json" && ! cmp -s "$tmp/r1.json" "$tmp/r2.json" &&
        grep -qF '"input":"embedding","vocab":40,"positions":"none"' "$tmp/r1.json" &&
        grep -qF '"input_source":"random ids, seed 1 in model.embed_tokens.weight"' "$tmp/r1.json" &&
        grep -qF '"input_source":"random ids, seed 2 in model.embed_tokens.weight"' "$tmp/r2.json"
}
check "no --token-ids: random ids over the table's 40 rows, resampled by the seed" random_ids
# The embedding input's warning names the table read, not the S of a drawn one.
table_warning() {
    grep -qF "embedding input (V = 40, the checkpoint's table model.embed_tokens.weight): " "$tmp/r1.json" &&
        ! grep -qF 'embedding input (V = 40, S = ' "$tmp/r1.json"
}
check "the embedding input's warning names the checkpoint's table, not a drawn table's S" table_warning
gpt2_positions() {
    # shellcheck disable=SC2086
    "$BIN" --batch -T 8 $G --weights "$gpt2" >"$tmp/g.json" 2>/dev/null &&
        grep -qF '"vocab":50,"positions":"learned"' "$tmp/g.json" &&
        grep -qF '"input_source":"random ids, seed 1 in wte.weight + wpe.weight"' "$tmp/g.json"
}
check "GPT-2: wte's rows and wpe's learned positions" gpt2_positions

# --weights A --export-weights B writes A's table (and GPT-2's wpe) back: --weights B gives A's
# document bit for bit, but for "weights", the table's names in input_source and the embedding input's
# warning (the export writes Llama's:
# model.embed_tokens, and attnscope's model.embed_positions for wpe), holds A's rows, and takes
# A's context (32 positions, not the 12 the export ran at).
table_round_trip() { # name settings checkpoint
    local out=$tmp/rt-$1 settings=$2 checkpoint=$3
    # shellcheck disable=SC2086
    "$BIN" --batch -T 12 $settings --weights "$checkpoint" --export-weights "$out" >"$out.a.json" 2>/dev/null &&
        "$BIN" --batch -T 12 $settings --weights "$out" >"$out.b.json" 2>/dev/null && [ -s "$out.b.json" ] &&
        "$BIN" --batch -T 32 $settings --weights "$out" >/dev/null 2>&1 &&
        sed 's/\([ (]\)wte\.weight + wpe\.weight\([")]\)/\1model.embed_tokens.weight + model.embed_positions.weight\2/g' \
            "$out.a.json" | grep -v '^ "weights": ' | cmp -s - <(without_weights "$out.b.json") &&
        /usr/bin/python3 - "$checkpoint" "$out/model.safetensors" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
import numpy as np
from hf_forward import checkpoint_tensors
a, b = ({n.replace("transformer.", ""): x for n, x in checkpoint_tensors(path).items()}
        for path in sys.argv[1:3])
pairs = [("model.embed_tokens.weight", "model.embed_tokens.weight"), ("wte.weight", "model.embed_tokens.weight"),
         ("wpe.weight", "model.embed_positions.weight")]
same = [np.array_equal(a[x], b[y]) for x, y in pairs if x in a]
sys.exit(0 if same and all(same) and len(b) == len([n for n in b if n.startswith("model.")]) else 1)
PY
}
check "Qwen3 (BF16, sharded): the export holds its table, and reads back to its document bit for bit" \
    table_round_trip qwen3 "$Q" "$qwen3"
check "GPT-2: the export holds wte and wpe, and reads back to its document bit for bit" \
    table_round_trip gpt2 "$G" "$gpt2"
# The export's config.json names gemma2, so that its (unscaled) table is read back scaled.
gemma2=$tmp/gemma2-BF16-sharded/checkpoint
E="-L 2 -a softmax -m window-causal --window 3 --window-layers 1:1 -k plain --ln-place peri --ln-scale sqrt-d --wo gaussian -d 24 --heads 4 --kv-heads 2 -n rms --ln-eps 1e-06 --norm-gain-offset 1 --rope half --rope-theta 10000 --logit-softcap 5 --mlp geglu --mlp-hidden 32"
check "Gemma 2: the export holds its table unscaled and reads back, scaled, to its document bit for bit" \
    table_round_trip gemma2 "$E" "$gemma2"

# shellcheck disable=SC2086
check "--vocab that disagrees with the table: refused, naming both" refused \
    "--vocab 41: the checkpoint's embedding table model.embed_tokens.weight has V = 40 rows" -- \
    $Q --vocab 41 --weights "$qwen3"
# shellcheck disable=SC2086
check "--positions none on GPT-2's wpe: refused" refused \
    "--positions none: the checkpoint adds its learned positions" -- $G --positions none --weights "$gpt2"
# shellcheck disable=SC2086
check "T past wpe's 32 rows (the file alone): refused, naming the context" refused \
    "T = 33 is past the model's context of 32 positions (the rows of wpe.weight)" -- \
    -T 33 $G --weights "$gpt2/model.safetensors"
# shellcheck disable=SC2086
check "T past config.json's n_positions: refused" refused \
    "T = 33 is past the model's context of 32 positions (n_positions in config.json)" -- \
    -T 33 $G --weights "$gpt2"
# shellcheck disable=SC2086
check "T past config.json's max_position_embeddings: refused" refused \
    "T = 65 is past the model's context of 64 positions (max_position_embeddings in config.json)" -- \
    -T 65 $Q --weights "$qwen3"
# The table's own checks: a table of another width, positions without a table.
/usr/bin/python3 - "$gpt2/model.safetensors" "$tmp" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import read, write
tensors, meta = read(sys.argv[1])
narrow = [(n, t, [s[0], 8] if n == "wte.weight" else s, r[: len(r) // 2] if n == "wte.weight" else r)
          for n, t, s, r in tensors]
write(sys.argv[2] + "/narrow.safetensors", narrow, meta)
write(sys.argv[2] + "/no-wte.safetensors", [t for t in tensors if t[0] != "wte.weight"], meta)
PY
# shellcheck disable=SC2086
check "a table of another width: refused, naming the tensor and the shape expected" refused \
    "tensor 'wte.weight' has shape [50, 8], expected (rows, d = 16)" -- $G --weights "$tmp/narrow.safetensors"
# shellcheck disable=SC2086
check "wpe without wte: refused" refused \
    "tensor 'wpe.weight' (learned positions) without the embedding table 'wte.weight'" -- \
    $G --weights "$tmp/no-wte.safetensors"
# ViT's names: a tensor left out, or of another shape, is named with exit 2 and no document.
vit=$tmp/vit-F32-single/checkpoint
/usr/bin/python3 - "$vit/model.safetensors" "$tmp" <<'PY'
import sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import read, write
tensors, meta = read(sys.argv[1])
query = "encoder.layer.1.attention.attention.query.weight"
write(sys.argv[2] + "/vit-no-query.safetensors", [t for t in tensors if t[0] != query], meta)
after = "encoder.layer.0.layernorm_after.bias"
short = [(n, t, [s[0] - 1] if n == after else s, r[:-4] if n == after else r) for n, t, s, r in tensors]
write(sys.argv[2] + "/vit-short-bias.safetensors", short, meta)
PY
V="-T 12 --hf-config $vit"
# shellcheck disable=SC2086
check "ViT without a layer's query: refused, naming the tensor" refused \
    "no tensor 'encoder.layer.1.attention.attention.query.weight' (shape [16, 16]), which this configuration needs" -- \
    $V --weights "$tmp/vit-no-query.safetensors"
# shellcheck disable=SC2086
check "ViT with a bias of another shape: refused, naming both shapes" refused \
    "tensor 'encoder.layer.0.layernorm_after.bias' has shape [15], expected [16]" -- \
    $V --weights "$tmp/vit-short-bias.safetensors"
# shellcheck disable=SC2086
check "ViT's names under post-LN: refused, naming what they lack" refused \
    "ViT's names have no tensor for a norm after a branch" -- $V --ln-place post --weights "$vit"
printf '3\n\n7\n40\n' >"$tmp/big.txt"
# shellcheck disable=SC2086
check "an id the table has no row for: refused, naming the line and the value" refused \
    "--token-ids: $tmp/big.txt:4: token id 40 is not below V = 40 (model.embed_tokens.weight)" -- \
    $Q --weights "$qwen3" --token-ids "$tmp/big.txt"
printf '[3, 7, 39]' >"$tmp/three.json"
# shellcheck disable=SC2086
check "-T that disagrees with the file's count: refused, naming both" refused \
    "--token-ids '$tmp/three.json' holds 3 ids, but -T/--tokens says 4" -- \
    $Q -T 4 --weights "$qwen3" --token-ids "$tmp/three.json"
# shellcheck disable=SC2086
check "--input orthonormal with --token-ids: refused" refused \
    "accepted only with the embedding input (not --input orthonormal)" -- \
    $Q --input orthonormal --weights "$qwen3" --token-ids "$tmp/three.json"
finish
