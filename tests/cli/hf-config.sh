#!/bin/bash
# --hf-config FILE|DIR: a Llama-family config.json gives the batch document of the same
# settings spelled as options; its unmodelled fields are warned about and listed in the
# document; with --weights DIR it reads a checkpoint in two arguments; options after it
# override it; hostile files exit 2 with the file, the field and what is accepted, and print
# nothing on stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

mkdir -p "$tmp/tiny"
cat >"$tmp/tiny/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
 "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
 "num_hidden_layers": 2, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
 "hidden_act": "silu", "initializer_range": 0.02, "max_position_embeddings": 2048,
 "vocab_size": 32000, "tie_word_embeddings": false, "torch_dtype": "float32"}
JSON
# The same settings, spelled out (docs/hf-config.md's table for llama).
spelled="-d 64 --heads 4 --kv-heads 2 -L 2 -n rms --ln-place pre --ln-scale sqrt-d --ln-eps 1e-6
 --rope half --rope-theta 10000 --mlp swiglu --mlp-hidden 96 --init gpt2 --init-std 0.02
 --depth-scale none -m causal --wo gaussian -k plain"
base="--batch -T 16"

# The two documents without "hf_config" are equal, key for key.
same_without_hf() { # a.json b.json
    "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("hf_config", None); b.pop("hf_config", None)
# Drawing options spelled out with --weights warn that they have no effect (the file's own
# settings do not): the documents are compared without those warnings.
for d in (a, b):
    d["warnings"] = [w for w in d["warnings"] if "drawn weights (no --weights)" not in w]
sys.exit(0 if a == b else 1)
PYEOF
}
# shellcheck disable=SC2086
"$BIN" $base --hf-config "$tmp/tiny" >"$tmp/hf.json" 2>"$tmp/hf.err"
check "a directory's config.json: exit 0, no warning" test $? -eq 0 -a ! -s "$tmp/hf.err"
# shellcheck disable=SC2086
"$BIN" $base $spelled >"$tmp/spelled.json"
check "... the document of the same settings spelled as options" same_without_hf "$tmp/hf.json" "$tmp/spelled.json"
check "... and hf_config names the file, the family and nothing unmodelled" "$PY" -c "
import json; h = json.load(open('$tmp/hf.json'))['hf_config']
assert h == {'file': '$tmp/tiny/config.json', 'model_type': 'llama', 'unmodelled': [],
             'unmodelled_left_out': 0}, h"

# An unmodelled field: warned on stderr and listed in the document.
"$PY" -c "
import json; c = json.load(open('$tmp/tiny/config.json'))
c['rope_scaling'] = {'rope_type': 'yarn', 'factor': 4.0}; c['num_local_experts'] = 8
json.dump(c, open('$tmp/scaled.json', 'w'))"
# shellcheck disable=SC2086
"$BIN" $base --hf-config "$tmp/scaled.json" >"$tmp/scaled-doc.json" 2>"$tmp/scaled.err"
check "unmodelled fields: exit 0" test $? -eq 0
check "... each named in a warning" bash -c "grep -q 'warning: $tmp/scaled.json: rope_scaling = {\"rope_type\":\"yarn\", \"factor\":4.0} is not modelled: rotary scaling' '$tmp/scaled.err' && grep -q 'num_local_experts = 8 is not modelled: a mixture of experts' '$tmp/scaled.err'"
check "... and in the document, with its value" "$PY" -c "
import json; u = json.load(open('$tmp/scaled-doc.json'))['hf_config']['unmodelled']
assert [(x['field'], x['value']) for x in u] == [('rope_scaling', {'rope_type': 'yarn', 'factor': 4.0}), ('num_local_experts', 8)], u"

# Options after it override it; before it, it overrides them.
# shellcheck disable=SC2086
check "-L 1 after --hf-config: depth 1" bash -c "'$BIN' $base --hf-config '$tmp/tiny' -L 1 | '$PY' -c 'import json,sys; assert json.load(sys.stdin)[\"config\"][\"depth\"] == 1'"
# shellcheck disable=SC2086
check "-L 1 before --hf-config: the file's depth 2" bash -c "'$BIN' $base -L 1 --hf-config '$tmp/tiny' | '$PY' -c 'import json,sys; assert json.load(sys.stdin)[\"config\"][\"depth\"] == 2'"

# A checkpoint in two arguments: the weights attnscope draws for these settings, beside the
# config.json, read back as --weights with the settings spelled out.
# shellcheck disable=SC2086
"$BIN" $base $spelled --export-weights "$tmp/ckpt" >/dev/null 2>&1
# An export whose block no Hugging Face family has (LayerNorm, a plain MLP, no rotation under
# Llama's names) names no model_type.
# shellcheck disable=SC2086
"$BIN" $base --heads 2 --mlp gelu --export-weights "$tmp/ckpt-own" >/dev/null 2>&1
cp "$tmp/tiny/config.json" "$tmp/ckpt/config.json"
# shellcheck disable=SC2086
"$BIN" $base --hf-config "$tmp/ckpt" --weights "$tmp/ckpt" >"$tmp/two.json" 2>"$tmp/two.err"
check "--hf-config DIR --weights DIR: exit 0" test $? -eq 0
# shellcheck disable=SC2086
"$BIN" $base $spelled --weights "$tmp/ckpt" >"$tmp/spelled-weights.json"
check "... the document of --weights with the settings spelled out" same_without_hf "$tmp/two.json" "$tmp/spelled-weights.json"
# shellcheck disable=SC2086
check "... and a depth the checkpoint's config.json contradicts is refused" bash -c "! '$BIN' $base --hf-config '$tmp/ckpt' -L 1 --weights '$tmp/ckpt' >/dev/null 2>'$tmp/e' && grep -q 'num_hidden_layers is 2, but the settings give 1' '$tmp/e'"

# The -small presets (written by hand from the same config.json files, scaled to d = 256):
# the file with the same scaling spelled after it gives the preset's whole document.
small() { # preset, file, scaling options
    "$BIN" --batch --preset "presets/$1.preset" >"$tmp/preset.json" &&
        # shellcheck disable=SC2086
        "$BIN" --batch -T 64 --hf-config "tests/data/hf-config/$2" $3 >"$tmp/file.json" 2>/dev/null &&
        same_without_hf "$tmp/preset.json" "$tmp/file.json"
}
check "gpt2.json at d = 256: gpt2-small-small's document" small gpt2-small-small gpt2.json "-d 256 --heads 4"
check "qwen3-8b.json at d = 256: qwen3-8b-small's document" small qwen3-8b-small qwen3-8b.json \
    "-d 256 --heads 4 --kv-heads 1 --mlp-hidden 768"
# (The file's head_dim 64 is --head-dim 64, its 64 heads not splitting 2880; the small preset's
# 8 heads of 32 span 256 of d = 180, the same share.)
check "gpt-oss-20b.json at d = 180, window 16: gpt-oss-20b-small's document" small gpt-oss-20b-small \
    gpt-oss-20b.json "-d 180 --heads 8 --head-dim 32 --kv-heads 1 -m window-causal -w 15 --window-layers 1:1"
# Gemma 3's window covers T = 64: the mask causal, the 5:1 pattern kept for the local theta.
check "gemma-3-4b.json at d = 320: gemma3-4b-small's document" small gemma3-4b-small \
    gemma-3-4b.json "-d 320 --heads 4 --kv-heads 2 --head-dim 64 --mlp-hidden 1280"

# Hostile files: exit 2, the file named, nothing on stdout.
refused() { check "$1" ends_saying 2 "$3" -- "$BIN" --batch -T 16 --hf-config "$2"; } # description, file, expected message part
bad() { printf '%s' "$2" >"$tmp/$1.json"; }
bad unknown '{"model_type": "bert", "hidden_size": 768}'
refused "an unknown model_type names the accepted ones" "$tmp/unknown.json" "\"model_type\" is \"bert\": accepted gpt2, llama, mistral, qwen2, qwen3, gemma2, gemma3_text, gemma3, olmo2, gpt_oss, phi3, vit"
bad type '{"model_type": "llama", "num_attention_heads": "32"}'
refused "a size as a string" "$tmp/type.json" "'$tmp/type.json': \"num_attention_heads\" is \"32\": accepted a whole number from 1 to 1048576"
bad negative '{"model_type": "llama", "num_hidden_layers": -2}'
refused "a negative depth" "$tmp/negative.json" "\"num_hidden_layers\" is -2"
bad huge '{"model_type": "llama", "hidden_size": 18446744073709551616}'
refused "a huge width" "$tmp/huge.json" "\"hidden_size\" is 18446744073709551616"
bad split '{"model_type": "gpt2", "n_embd": 100, "n_head": 12}'
refused "a width the heads do not divide" "$tmp/split.json" "\"n_embd\" is 100: accepted a multiple of n_head = 12"
# A value the file lacks is the family's default, and the message says so rather than quote
# it as the file's; one the file holds is quoted as before.
bad nokv '{"model_type": "mistral", "hidden_size": 100, "num_attention_heads": 10, "num_hidden_layers": 2}'
refused "a family default that does not fit is named as the default" "$tmp/nokv.json" "\"num_key_value_heads\" is 8 (not in the file: the Mistral family's default): accepted a divisor of num_attention_heads = 10"
bad nokv3 '{"model_type": "qwen3", "hidden_size": 100, "num_attention_heads": 10, "num_hidden_layers": 2}'
refused "... for Qwen3 too" "$tmp/nokv3.json" "\"num_key_value_heads\" is 32 (not in the file: the Qwen3 family's default)"
bad kv '{"model_type": "mistral", "hidden_size": 100, "num_attention_heads": 10, "num_key_value_heads": 3, "num_hidden_layers": 2}'
refused "the file's own value is quoted as the file's" "$tmp/kv.json" "\"num_key_value_heads\" is 3: accepted a divisor"
bad types '{"model_type": "gpt_oss", "num_hidden_layers": 4, "layer_types": ["sliding_attention"]}'
refused "layer_types of another length than the depth" "$tmp/types.json" "\"layer_types\" is an array of 1: accepted an array of 4 names"
# A UTF-8 byte-order mark is named (transformers' json.loads refuses it too), not '?'.
printf '\xef\xbb\xbf{"model_type": "llama"}' >"$tmp/bom.json"
refused "a byte-order mark, named" "$tmp/bom.json" "'$tmp/bom.json': JSON byte 1: a UTF-8 byte-order mark (EF BB BF) before the value: JSON has none"
printf '{"model_type": "llama", \xc3\x28: 1}' >"$tmp/utf8.json"
refused "a name that is not UTF-8" "$tmp/utf8.json" "'$tmp/utf8.json': "
: >"$tmp/empty.json"
refused "an empty file" "$tmp/empty.json" "'$tmp/empty.json': "
head -c 1048577 /dev/zero | tr '\0' ' ' >"$tmp/large.json"
refused "a file above 1 MiB" "$tmp/large.json" "'$tmp/large.json': larger than 1 MiB"
# attnscope's own export of a block no family has writes no model_type.
refused "an --export-weights config.json: said so" "$tmp/ckpt-own" "(a config.json --export-weights wrote: give its settings as options)"
mkdir -p "$tmp/nothing"
# The open's own reason, not a parse of nothing.
refused "a directory without config.json" "$tmp/nothing" "'$tmp/nothing/config.json': No such file or directory"
mkfifo "$tmp/fifo.json"
refused "a FIFO" "$tmp/fifo.json" "'$tmp/fifo.json': a FIFO, not a regular file"
# A regular file whose read fails says the reason (/proc/self/mem at address 0: EIO).
refused "a read that fails: its reason" /proc/self/mem "'/proc/self/mem': Input/output error"

# A window that covers every token at the T read (the causal mask) is exported as the file's own
# window, not one of T keys: Gemma 3's 24 keys on 2 of every 3 layers, Mistral's 20 on every
# layer (which names mistral: Llama's model slides none), read at T = 14; the export read back
# gives the original's document at T = 14 and at T = 30, where the window acts.
cat >"$tmp/gemma3-window.json" <<'JSON'
{"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 2,
 "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 6, "intermediate_size": 64,
 "sliding_window": 24, "sliding_window_pattern": 3, "query_pre_attn_scalar": 16,
 "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rms_norm_eps": 1e-6,
 "hidden_activation": "gelu_pytorch_tanh"}
JSON
cat >"$tmp/mistral-window.json" <<'JSON'
{"model_type": "mistral", "hidden_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1,
 "num_hidden_layers": 2, "intermediate_size": 64, "sliding_window": 20, "rope_theta": 10000.0,
 "rms_norm_eps": 1e-5, "hidden_act": "silu"}
JSON
# The two documents without "hf_config" and the files' own warnings are equal.
same_but_files() { # a.json b.json
    "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("hf_config")
    d["warnings"] = [w for w in d["warnings"] if ".json: " not in w]
sys.exit(0 if a == b else 1)
PYEOF
}
window_kept() { # name keys model_type
    local out=$tmp/export-$1
    "$BIN" --batch -T 14 --hf-config "$tmp/$1.json" --export-weights "$out" >/dev/null 2>&1 &&
        grep -qF "\"sliding_window\": $2," "$out/config.json" &&
        grep -qF "\"model_type\": \"$3\"," "$out/config.json" || return 1
    for T in 14 30; do
        "$BIN" --batch -T $T --hf-config "$tmp/$1.json" >"$tmp/original.json" 2>/dev/null &&
            "$BIN" --batch -T $T --hf-config "$out" >"$tmp/exported.json" 2>/dev/null &&
            same_but_files "$tmp/original.json" "$tmp/exported.json" || return 1
    done
}
check "Gemma 3's window of 24 keys at T = 14: exported as 24, the same model at T = 14 and 30" \
    window_kept gemma3-window 24 gemma3_text
check "Mistral's window of 20 keys at T = 14: exported as 20 under mistral, the same at 14 and 30" \
    window_kept mistral-window 20 mistral

# A null where the class has a number, and the relations between the file's own values: the
# file and its fields named (not --head-dim, which nobody gave).
bad nullmlp '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": null}'
refused "a null MLP width where LlamaConfig has a number" "$tmp/nullmlp.json" "'$tmp/nullmlp.json': \"intermediate_size\" is null: accepted a whole number"
bad nulldepth '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": null}'
refused "a null depth is null, not missing" "$tmp/nulldepth.json" "\"num_hidden_layers\" is null: accepted"
bad hd128 '{"model_type": "qwen3", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "head_dim": 128}'
refused "head_dim above the width: the file's field" "$tmp/hd128.json" "'$tmp/hd128.json': \"head_dim\" is 128: accepted at most hidden_size = 64"
bad hdodd '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "head_dim": 15}'
refused "an odd head_dim with rotary positions: the file's field" "$tmp/hdodd.json" "\"head_dim\" is 15: accepted an even width"
check "... and the T <= d of the orthonormal input names the file's width" ends_saying 2 \
    "--width 64 is \"hidden_size\" of --hf-config '$tmp/tiny/config.json'" -- "$BIN" --batch -T 100 --hf-config "$tmp/tiny"

# What the file leaves out or leaves untyped is said, never silent.
bad notype '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "rope_scaling": {"factor": 2.0}}'
check "rope_scaling without a rope_type: the default rotation, and a warning saying so" bash -c "
    '$BIN' --batch -T 16 --hf-config '$tmp/notype.json' 2>'$tmp/e' | '$PY' -c 'import json,sys; assert json.load(sys.stdin)[\"config\"][\"rope_scaling\"] == \"none\"' &&
    grep -qF 'rope_scaling = {\"factor\":2.0} is not modelled: no rope_type (or type): transformers uses the default rotation and ignores factor 2.0' '$tmp/e'"
bad ossmin '{"model_type": "gpt_oss", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16, "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 64}'
check "gpt-oss without rope_scaling: GptOssConfig's YaRN, warned as the family's default" bash -c "
    '$BIN' --batch -T 16 --hf-config '$tmp/ossmin.json' 2>'$tmp/e' >/dev/null &&
    grep -qF '(not in the file: the gpt-oss family'\''s default) is not modelled: rotary scaling yarn' '$tmp/e' &&
    grep -qF 'swiglu_limit = 7.0 (not in the file' '$tmp/e'"
# GPT-2's and ViT's attention has n_head heads of n_embd / n_head, each its own keys and values:
# transformers ignores head_dim and num_key_value_heads there, and so does attnscope, naming
# them where they say otherwise (a head_dim of n_embd / n_head and as many key/value heads as
# heads say the same: no warning).
bad gpt2shape '{"model_type": "gpt2", "n_embd": 32, "n_head": 2, "n_layer": 2, "activation_function": "gelu", "head_dim": 8, "num_key_value_heads": 1}'
check "GPT-2 with head_dim and num_key_value_heads: ignored (heads of n_embd / n_head), each warned" bash -c "
    '$BIN' --batch -T 16 --hf-config '$tmp/gpt2shape.json' 2>'$tmp/e' | '$PY' -c 'import json,sys
c = json.load(sys.stdin)[\"config\"]; assert (c[\"heads\"], c[\"head_dim\"], c[\"kv_heads\"]) == (2, 0, 0)' &&
    grep -qF 'head_dim = 8 is not modelled: ignored by transformers'\'' GPT-2, whose heads are hidden_size / num_attention_heads wide' '$tmp/e' &&
    grep -qF 'num_key_value_heads = 1 is not modelled: ignored by transformers'\'' GPT-2, whose heads each have their own keys and values' '$tmp/e'"
bad vitshape '{"model_type": "vit", "hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 64, "head_dim": 16, "num_key_value_heads": 2}'
check "ViT with a head_dim of d/H and as many key/value heads as heads: no warning about them" bash -c "
    '$BIN' --batch -T 16 --hf-config '$tmp/vitshape.json' 2>'$tmp/e' >/dev/null &&
    ! grep -q 'head_dim\|num_key_value_heads' '$tmp/e'"

# --token-ids setting T after the file: its window judged at the ids' count, wherever
# --token-ids stands, as if -T had been given before --hf-config.
mkdir -p "$tmp/mis"
cat >"$tmp/mis/config.json" <<'JSON'
{"model_type": "mistral", "hidden_size": 32, "intermediate_size": 48, "num_attention_heads": 4,
 "num_key_value_heads": 1, "num_hidden_layers": 2, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
 "hidden_act": "silu", "sliding_window": 64, "vocab_size": 40}
JSON
seq 1 14 >"$tmp/ids14.txt"
# shellcheck disable=SC2086
"$BIN" --batch -T 14 --hf-config "$tmp/mis" --token-ids "$tmp/ids14.txt" >"$tmp/t-first.json" 2>/dev/null
for order in "--token-ids $tmp/ids14.txt --hf-config $tmp/mis" "--hf-config $tmp/mis --token-ids $tmp/ids14.txt"; do
    # shellcheck disable=SC2086
    "$BIN" --batch $order >"$tmp/t-ids.json" 2>"$tmp/e"
    check "a window of 64 keys, 14 ids ($order): exit 0" test $? -eq 0
    check "... the document of -T 14 before --hf-config" cmp -s "$tmp/t-ids.json" "$tmp/t-first.json"
done
check "... the mask causal (the window covers the 14 tokens)" "$PY" -c "
import json; c = json.load(open('$tmp/t-ids.json'))['config']
assert c['mask'] == 'causal' and c['window_layers'] == 'all', c"
# The other way: 300 keys cover T = 256, the default the file is read at, and act at 400 ids.
sed 's/"sliding_window": 64/"sliding_window": 300/' "$tmp/mis/config.json" >"$tmp/mis300.json"
seq 1 400 >"$tmp/ids400.txt"
check "a window of 300 keys, 400 ids: the window acts, 299 keys back" bash -c "
    '$BIN' --batch --hf-config '$tmp/mis300.json' --token-ids '$tmp/ids400.txt' 2>/dev/null |
    '$PY' -c 'import json,sys; c = json.load(sys.stdin)[\"config\"]; assert (c[\"T\"], c[\"mask\"], c[\"window\"]) == (400, \"window-causal\", 299), c'"
# A checkpoint read in two arguments: the same (the window judged before its shapes are).
"$BIN" --batch -T 14 --hf-config "$tmp/mis" --input embedding --vocab 40 --export-weights "$tmp/misckpt" >/dev/null 2>&1
cp "$tmp/mis/config.json" "$tmp/misckpt/config.json"
check "... and with --weights, --token-ids first" bash -c "
    '$BIN' --batch --token-ids '$tmp/ids14.txt' --hf-config '$tmp/misckpt' --weights '$tmp/misckpt' 2>'$tmp/e' |
    '$PY' -c 'import json,sys; c = json.load(sys.stdin)[\"config\"]; assert (c[\"T\"], c[\"mask\"]) == (14, \"causal\"), c'"

# Combinations that would lose what it read.
check "--jsonl with --hf-config is refused" bash -c "! '$BIN' --batch --jsonl --hf-config '$tmp/tiny' </dev/null 2>'$tmp/e' && grep -q 'accepted only without --jsonl' '$tmp/e'"
check "grid with --hf-config is refused" bash -c "! '$BIN' grid 'T=8,16' --hf-config '$tmp/tiny' >/dev/null 2>'$tmp/e' && grep -q 'grid: --hf-config is not accepted' '$tmp/e'"
check "-T after --hf-config that makes its window act is refused" bash -c "! '$BIN' --batch --hf-config tests/data/hf-config/gpt-oss-20b.json -T 64 >/dev/null 2>'$tmp/e' && grep -q 'give -T before --hf-config' '$tmp/e'"
finish
