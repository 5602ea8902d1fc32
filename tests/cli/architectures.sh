#!/bin/bash
# The presets of real architectures: each one's settings are the values its header cites from
# the model's config.json (the table below, written from those files, not from the presets),
# its -small variant is the same block at d = 256, T = 64 with the depth kept (where the heads
# do not split d, a d that keeps their span H·d_h/d: gemma3-4b's 0.8, gpt-oss-20b's 4096/2880), the program
# reads each full preset (it prices it: T, d and depth as cited), and each -small variant runs
# in --batch to a valid document.  The times are printed as notes, never judged.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

# preset|settings from config.json: width = hidden_size (or heads x head_dim where attnscope's
# heads split d), depth = num_hidden_layers, heads, kv-heads = num_key_value_heads, the MLP,
# ln-eps = rms_norm_eps / layer_norm_epsilon, rope-theta, and the family's norm placement and
# QK-norm (modeling_<family>.py); init-std = initializer_range and the init each codebase
# writes: HF's _init_weights N(0, 0.02^2) with no depth scaling of W^O and the down
# projection (only GPT-2's scales them, init = gpt2's own), OLMo-core's `normal` (a normal cut
# at 3 std, no depth scaling); gpt-oss's sliding_window 128 (window = W - 1 = 127) on every
# other layer, sliding first (layer_types: window-layers 1:1), and its sinks drawn N(0, 0.02^2);
# head-dim where H x head_dim is not hidden_size (Gemma 3 4B: 8 x 256 on 2560; gpt-oss: 64 x 64
# on 2880); Gemma 3's rope_local_base_freq 10000 on its sliding layers (sliding_window_pattern
# 6: window-layers 5:1, the pattern kept where the window covers T) and its rope_scaling
# (linear, factor 8) on the global ones.
cited='gpt2-small|width=768 depth=12 heads=12 layernorm=ln ln-place=pre ln-eps=1e-05 mlp=gelu mlp-ratio=4 init=gpt2 mask=causal wo=gaussian
llama3-8b|width=4096 depth=32 heads=32 kv-heads=8 layernorm=rms ln-place=pre ln-eps=1e-05 mlp=swiglu mlp-hidden=14336 rope=half rope-theta=500000 mask=causal wo=gaussian init=gpt2 init-std=0.02 depth-scale=none
mistral-7b|width=4096 depth=32 heads=32 kv-heads=8 layernorm=rms ln-place=pre ln-eps=1e-05 mlp=swiglu mlp-hidden=14336 rope=half rope-theta=10000 mask=causal wo=gaussian init=gpt2 init-std=0.02 depth-scale=none
qwen3-8b|width=4096 depth=36 heads=32 kv-heads=8 layernorm=rms ln-place=pre ln-eps=1e-06 mlp=swiglu mlp-hidden=12288 qk-norm=head qk-norm-place=before-rope rope=half rope-theta=1000000 mask=causal wo=gaussian init=gpt2 init-std=0.02 depth-scale=none
olmo2-7b|width=4096 depth=32 heads=32 kv-heads=32 layernorm=rms ln-place=output ln-eps=1e-06 mlp=swiglu mlp-hidden=11008 qk-norm=full qk-norm-place=before-rope rope=half rope-theta=500000 mask=causal wo=gaussian init=trunc-normal init-std=0.02 depth-scale=none
gemma3-4b|width=2560 depth=34 heads=8 kv-heads=4 head-dim=256 layernorm=rms ln-place=peri ln-eps=1e-06 mlp=geglu mlp-hidden=10240 qk-norm=head qk-norm-place=before-rope rope=half rope-theta=1000000 rope-local-base-freq=10000 rope-scaling=linear rope-factor=8 window-layers=5:1 mask=causal wo=gaussian init=gpt2 init-std=0.02 depth-scale=none
gpt-oss-20b|width=2880 depth=24 heads=64 kv-heads=8 head-dim=64 layernorm=rms ln-place=pre ln-eps=1e-05 rope=half rope-theta=150000 mask=window-causal window=127 window-layers=1:1 sink=0 sink-std=0.02 wo=gaussian init=gpt2 init-std=0.02 depth-scale=none'
# The head width each config states (head_dim, or n_embd / n_head): head-dim, or width / heads
# where the preset sets none, must be it.
head_dims='gpt2-small=64 llama3-8b=128 mistral-7b=128 qwen3-8b=128 olmo2-7b=128 gemma3-4b=256 gpt-oss-20b=64'

# A preset's settings, KEY=VALUE a line (the file read here, not by the program).
settings_of() { grep -vE '^[[:space:]]*(#|$)' "$1" | sed -E 's/[[:space:]]*#.*//; s/[[:space:]]*=[[:space:]]*/=/'; }

equals_cited() { # preset, cited settings
    local file=presets/$1.preset pair key want got bad=0
    [ -f "$file" ] || { echo "  $file is missing"; return 1; }
    settings_of "$file" >"$tmp/$1"
    for pair in $2; do
        key=${pair%%=*} want=${pair#*=}
        got=$(grep -m1 "^$key=" "$tmp/$1" | cut -d= -f2-)
        [ "$got" = "$want" ] || { echo "  $key: $got in $file, $want in its config.json"; bad=1; }
    done
    local dh=${head_dims#*"$1="}
    dh=${dh%% *}
    got=$(grep -m1 '^head-dim=' "$tmp/$1" | cut -d= -f2)
    [ -n "$got" ] || got=$(($(grep -m1 '^width=' "$tmp/$1" | cut -d= -f2) / $(grep -m1 '^heads=' "$tmp/$1" | cut -d= -f2)))
    [ "$got" = "$dh" ] || { echo "  head width $got, its config.json's $dh"; bad=1; }
    return $bad
}

# The -small variant: d = 256, T = 64, the depth and every setting of the block kept; heads,
# key/value heads and the MLP's width scaled, keeping the grouping ratio H/G and the MLP's
# width per unit of d (to within rounding), and a window mask's keys per token of T
# ((window + 1) / T: gpt-oss's 128 of 512 are 16 of 64).
same_block_scaled() { # name
    "$PY" - "presets/$1.preset" "presets/$1-small.preset" <<'PY'
import sys
def fail(kind, value, tb):
    print(f"  {value}")
    sys.exit(1)
sys.excepthook = fail
def read(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if line:
            k, v = (s.strip() for s in line.split("=", 1))
            out[k] = v
    return out
full, small = read(sys.argv[1]), read(sys.argv[2])
scaled = {"tokens", "width", "heads", "kv-heads", "head-dim", "mlp-hidden", "window"}
assert small["tokens"] == "64", small["tokens"]
if "head-dim" in full:  # the heads' span H·d_h/d kept, H·d_h ≠ d on both
    span = lambda s: int(s["heads"]) * int(s["head-dim"]) / int(s["width"])
    assert span(full) == span(small) != 1, f"H·d_h/d {span(full)} at full size, {span(small)} in -small"
else:
    assert small["width"] == "256", small["width"]
assert set(full) == set(small), f"keys differ: {set(full) ^ set(small)}"
for k in set(full) - scaled:
    assert full[k] == small[k], f"{k}: {full[k]} at full size, {small[k]} in -small"
if "kv-heads" in full:
    ratio = lambda s: int(s["heads"]) / int(s["kv-heads"])
    assert ratio(full) == ratio(small), f"H/G {ratio(full)} at full size, {ratio(small)} in -small"
if full["mask"].startswith("window"):
    keys_per_t = lambda s: (int(s["window"]) + 1) / int(s["tokens"])
    assert keys_per_t(full) == keys_per_t(small), f"window keys / T {keys_per_t(full)} at full size, {keys_per_t(small)} in -small"
else:
    assert full["window"] == small["window"], f"window: {full['window']} at full size, {small['window']} in -small"
if "mlp-hidden" in full:
    per_d = lambda s: int(s["mlp-hidden"]) / int(s["width"])
    assert abs(per_d(full) - per_d(small)) <= 1 / 256, (per_d(full), per_d(small))
PY
}

# The program reads the full preset: priced above a second (minutes here), it says T, d and the
# depth it read and exits 2 without running; a machine fast enough to run it must give a
# valid document.
program_reads() { # name, T d depth
    "$BIN" --batch --preset "presets/$1.preset" --max-time 1 >"$tmp/out" 2>"$tmp/err"
    local status=$?
    if [ $status -eq 2 ]; then
        grep -qF "T = $2, d = $3, depth $4, 1 seed is estimated at" "$tmp/err" ||
            { echo "  stderr: $(cat "$tmp/err")"; return 1; }
    else
        [ $status -eq 0 ] && "$PY" tests/cli/contract.py "$2" "$4" <"$tmp/out"
    fi
}

runs_small() { # name
    local started=$SECONDS
    "$BIN" --batch --preset "presets/$1-small.preset" >"$tmp/small.json" 2>"$tmp/small.err" ||
        { echo "  exit $?: $(cat "$tmp/small.err")"; return 1; }
    echo "# $1-small: $((SECONDS - started)) s"
    local depth
    depth=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["depth"])' "$tmp/small.json") &&
        "$PY" tests/cli/contract.py 64 "$depth" <"$tmp/small.json"
}

while IFS='|' read -r name want; do
    check "$name: the settings its config.json gives" equals_cited "$name" "$want"
    check "$name-small: the same block at d = 256 (or the heads' span to d kept), T = 64, depth kept" same_block_scaled "$name"
    read -r T d depth < <(settings_of "presets/$name.preset" |
        awk -F= '$1 == "tokens" { t = $2 } $1 == "width" { w = $2 } $1 == "depth" { l = $2 } END { print t, w, l }')
    check "$name: the program reads it (T = $T, d = $d, depth $depth)" program_reads "$name" "$T" "$d" "$depth"
    check "$name-small runs in --batch: exit 0, a valid document" runs_small "$name"
done <<<"$cited"

finish
