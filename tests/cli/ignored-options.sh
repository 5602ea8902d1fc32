#!/bin/bash
# A setting the user set where it has no effect runs, and the document says so: one warning
# naming the setting, its value and what it needs (Setting_inert_text, from the settings
# table's in_use and needs).  Each case of the issue-25 exploration (each ran as the default,
# without a word), and the main option on: no warning.  A sink with another attention than
# softmax, once refused, follows the same rule now, on the command line, in a --jsonl line
# and (as documented) not from a preset's own lines.  A command-line setting every --jsonl
# line sets is named on stderr as without effect.  Refused still: --present with --batch;
# --softmax-demo with a setting it does not read or a checkpoint.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused() { refused_running "$BIN" -- "$@"; } # expected-stderr-fragment... -- args...
accepted() { "$BIN" "$@" >"$tmp/out" 2>"$tmp/err" && [ -s "$tmp/out" ]; }
small=(-T 8 -d 8 -L 1)

# args...: the run succeeds and its warnings are in $tmp/warnings, one a line.
warnings_of() {
    "$BIN" --batch "${small[@]}" "$@" >"$tmp/out" 2>"$tmp/err" &&
        "$PY" -c 'import json,sys; print("\n".join(json.load(sys.stdin)["warnings"]))' \
            <"$tmp/out" >"$tmp/warnings" ||
        { echo "  status $?, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
warns() { # expected-warning -- args...
    local expected=$1
    shift 2
    warnings_of "$@" && grep -qxF -- "$expected" "$tmp/warnings" ||
        { echo "  warnings: $(cat "$tmp/warnings" 2>/dev/null)"; return 1; }
}
quiet_about() { # option -- args...: no warning names the option
    local option=$1
    shift 2
    warnings_of "$@" && ! grep -qF -- "$option " "$tmp/warnings" ||
        { echo "  warnings: $(cat "$tmp/warnings")"; return 1; }
}
# Each case: the option and its value, the warning's words after "has no effect: it needs, for
# one, ", and the options that give it an effect.
while IFS='|' read -r given needs on; do
    option=${given%% *}
    [ -n "$given" ] || continue
    # shellcheck disable=SC2086
    check "$given alone: the warning names it and what it needs" warns \
        "$given has no effect: it needs, for one, $needs" -- $given
    # shellcheck disable=SC2086
    check "  with $on: no warning about $option" quiet_about "$option" -- $given $on
done <<'CASES'
--rope-factor 16|--rope half --rope-scaling linear (here --rope none, --rope-scaling none)|--rope half --rope-scaling linear
--rope-theta 500|--rope half (here --rope none)|--rope half
--nope-every 2|--rope half (here --rope none)|--rope half
--sink-std 0.3|--sink 0 (here --sink none)|--sink 0
--window 2|--mask window (here --mask full)|--mask window
--window-layers 1:1|--mask window (here --mask full)|--mask window
--init-alpha 0.2|--init cutting-skip (here --init normal)|--init cutting-skip
--mlp-ratio 2|--mlp gelu --mlp-hidden 0 (here --mlp none)|--mlp gelu
--skip-gain 0.5|--skip plain (here --skip none)|--skip plain
--positions learned|--input embedding (here --input orthonormal)|--input embedding
--vocab 100|--input embedding (here --input orthonormal)|--input embedding
--init-std 0.05|--init gpt2 (here --init normal)|--init gpt2
--rope-scaling linear|--rope half (here --rope none)|--rope half
CASES
check "--ln-eps 0.001 with unit LN rows: the warning" warns \
    "--ln-eps 0.001 has no effect: it needs, for one, --layernorm rms --ln-scale sqrt-d (here --ln-scale unit)" \
    -- -n rms --ln-eps 0.001
check "  with --ln-scale sqrt-d: none" quiet_about --ln-eps -- -n rms --ln-scale sqrt-d --ln-eps 0.001
check "--norm-gain-offset 1 with drawn weights (no gains to offset): the warning" warns \
    "--norm-gain-offset 1 has no effect: it needs, for one, --layernorm rms --weights FILE (here no --weights)" \
    -- -n rms --norm-gain-offset 1
check "--norm-gain-offset 1 without RMSNorm nor --weights: both named" warns \
    "--norm-gain-offset 1 has no effect: it needs, for one, --layernorm rms --weights FILE (here --layernorm none, no --weights)" \
    -- -n none --norm-gain-offset 1
# On a checkpoint's weights what says how weights are drawn has no effect ("weights=none" in
# the table's needs): the warning names the checkpoint; on drawn weights, nothing.
drawing=(--mlp gelu --wo gaussian --init gpt2 --init-std 0.03)
"$BIN" "${small[@]}" "${drawing[@]}" --export-weights "$tmp/drawing" >/dev/null 2>&1
check "--init-std 0.03 on a checkpoint: the warning names it" warns \
    "--init-std 0.03 has no effect: it needs, for one, --init gpt2 and drawn weights (no --weights) (here --weights $tmp/drawing/model.safetensors)" \
    -- "${drawing[@]}" --weights "$tmp/drawing"
check "  --init gpt2 too" grep -qxF -- \
    "--init gpt2 has no effect: it needs, for one, drawn weights (no --weights) (here --weights $tmp/drawing/model.safetensors)" \
    "$tmp/warnings"
check "  on drawn weights: none" quiet_about --init -- "${drawing[@]}"
for option in "--logit-softcap 30" "--qk-norm head" "--rope half" "--sink 5"; do
    # shellcheck disable=SC2086
    check "-a markov $option: the warning" warns \
        "$option has no effect: it needs, for one, --attention softmax (here --attention markov)" -- -a markov $option
    # shellcheck disable=SC2086
    check "  with softmax: none" quiet_about "${option%% *}" -- $option
done
# A θ that turns no layer: a local θ turns every layer the pattern marks L (all of them under
# `all`), leaving the global θ and its scaling nothing; under G no layer is local, and the
# pattern then picks nothing either (no window mask).
local=(--rope half --rope-local-base-freq 100)
for option in "--rope-theta 500" "--rope-scaling linear" "--rope-factor 4"; do
    needs="--rope half"
    [ "$option" = "--rope-factor 4" ] && needs="--rope half --rope-scaling linear"
    # shellcheck disable=SC2086
    check "${local[*]} $option (every layer local): the warning" warns \
        "$option has no effect under the other settings (it has one with, for one, $needs)" \
        -- "${local[@]}" --rope-scaling linear $option
    # shellcheck disable=SC2086
    check "  with --window-layers GL (layer 1 global): none" quiet_about "${option%% *}" \
        -- "${local[@]}" --rope-scaling linear --window-layers GL $option
done
check "${local[*]} --window-layers G: a warning for each" bash -c "
    warnings_of() { '$BIN' --batch ${small[*]} \"\$@\" | '$PY' -c 'import json,sys; print(chr(10).join(json.load(sys.stdin)[\"warnings\"]))'; }
    warnings_of ${local[*]} --window-layers G >'$tmp/both' &&
    grep -qF -- '--rope-local-base-freq 100 has no effect' '$tmp/both' &&
    grep -qF -- '--window-layers 0:1 has no effect' '$tmp/both'"
check "-a relu --sink 5 runs, as relu without the sink (the numbers bit for bit)" bash -c "
    '$BIN' --batch ${small[*]} -a relu --sink 5 | '$PY' -c 'import json,sys; d=json.load(sys.stdin); [d.pop(k) for k in (\"config\", \"warnings\")]; print(json.dumps(d))' >'$tmp/sink.json' &&
    '$BIN' --batch ${small[*]} -a relu | '$PY' -c 'import json,sys; d=json.load(sys.stdin); [d.pop(k) for k in (\"config\", \"warnings\")]; print(json.dumps(d))' >'$tmp/nosink.json' &&
    cmp -s '$tmp/sink.json' '$tmp/nosink.json'"
check "a default left alone says nothing" bash -c "'$BIN' --batch ${small[*]} | grep -q '\"warnings\": \[\]'"
check "--present --batch: refused" refused "--present: accepted only without --batch" -- \
    --batch "${small[@]}" --present
check "--softmax-demo -a markov: refused, naming both" refused "-a/--attention markov: ignored with --softmax-demo" -- \
    --batch --softmax-demo -T 10 -d 10 -a markov
check "--softmax-demo --weights: refused" refused "--softmax-demo: accepted without --weights" -- \
    --batch --softmax-demo -T 10 -d 10 --weights "$tmp"
check "--softmax-demo -T 10 -d 10 --seeds 3 --init-alpha 0.1: accepted" accepted \
    --batch --softmax-demo -T 10 -d 10 --seeds 3 --init-alpha 0.1
# A preset's own lines do not warn (a preset writes every setting, applied or not); the same
# setting on the command line does.  A --jsonl line warns for what it changes.
printf 'attention = relu\nsink = 5\n' >"$tmp/relu-sink.preset"
check "a preset with attention relu and sink 5: runs, no warning about the sink" quiet_about --sink \
    -- --preset "$tmp/relu-sink.preset"
check "  and --sink 5 given after it: the warning" warns \
    "--sink 5 has no effect: it needs, for one, --attention softmax (here --attention relu)" -- \
    --preset "$tmp/relu-sink.preset" --sink 5
jsonl_warns() {
    printf '{"attention": "markov", "sink": 5}\n{"attention": "markov"}\n' |
        "$BIN" --batch --jsonl "${small[@]}" >"$tmp/out" 2>"$tmp/err" &&
        "$PY" -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
said = "--sink 5 has no effect: it needs, for one, --attention softmax (here --attention markov)"
assert said in lines[0]["warnings"], lines[0]["warnings"]
assert not any("--sink" in w for w in lines[1]["warnings"]), lines[1]["warnings"]' <"$tmp/out" ||
        { echo "  stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "a --jsonl line with markov and a sink: runs with the warning; the next line without it" jsonl_warns
# An option given before a --preset or --hf-config that the file then changes is dropped: the
# file's value holds, as documented (later options override, earlier ones do not), and
# stderr names each such option, what was typed and what the file set; an option the file
# leaves alone, or sets to the same value, or one after the file, is no warning (main said
# nothing and ran T = d = 256 for the explorer's -T 64 -d 64 --seeds 4 --preset fig1-markov).
printf 'tokens = 16\nwidth = 16\nseeds = 1\nheads = 1\n' >"$tmp/small.preset"
printf '{"model_type": "llama", "hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 2}' \
    >"$tmp/config.json"
dropped_said() { # expected stderr lines (a file) -- args...
    local expected=$1
    shift 2
    "$BIN" --batch "$@" >"$tmp/out" 2>"$tmp/err" || { echo "  status $?: $(head -c 300 "$tmp/err")"; return 1; }
    grep -v "^attnscope: warning: $tmp/config.json: " "$tmp/err" | diff -u "$expected" - ||
        { echo "  (expected above)"; return 1; }
}
cat >"$tmp/preset-dropped" <<EOF
attnscope: warning: -T/--tokens 8 is dropped: --preset $tmp/small.preset, given after it, sets tokens = 16 (give options after --preset to override it)
attnscope: warning: -d/--width 32 is dropped: --preset $tmp/small.preset, given after it, sets width = 16 (give options after --preset to override it)
attnscope: warning: --seeds 4 is dropped: --preset $tmp/small.preset, given after it, sets seeds = 1 (give options after --preset to override it)
EOF
check "options before --preset that it changes: each named on stderr, the preset's values hold" \
    dropped_said "$tmp/preset-dropped" -- -T 8 -d 32 --seeds 4 --heads 1 -L 2 --preset "$tmp/small.preset"
check "... the document has the preset's T, d and seeds, and -L 2, which it leaves alone" \
    "$PY" -c 'import json,sys; c = json.load(open(sys.argv[1]))["config"]
sys.exit(0 if (c["T"], c["d"], c["seeds"], c["depth"]) == (16, 16, 1, 2) else 1)' "$tmp/out"
: >"$tmp/none"
check "options after --preset: no warning, they hold" \
    dropped_said "$tmp/none" -- --preset "$tmp/small.preset" -T 8 -d 32 --seeds 4
cat >"$tmp/hf-dropped" <<EOF
attnscope: warning: -L/--depth 3 is dropped: --hf-config $tmp/config.json, given after it, sets depth = 2 (give options after --hf-config to override it)
attnscope: warning: --heads 4 is dropped: --hf-config $tmp/config.json, given after it, sets heads = 2 (give options after --hf-config to override it)
EOF
check "options before --hf-config that it changes: each named, as for --preset (-T, which it does not set, holds)" \
    dropped_said "$tmp/hf-dropped" -- -T 8 -L 3 --heads 4 --hf-config "$tmp/config.json"
grid_dropped() {
    "$BIN" grid 'seed=1,2' --seeds 4 --preset "$tmp/small.preset" >"$tmp/grid" 2>"$tmp/err" &&
        grep -qxF "attnscope: warning: --seeds 4 is dropped: --preset $tmp/small.preset, given after it, sets seeds = 1 (give options after --preset to override it)" "$tmp/err" ||
        { echo "  status $?, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "grid names a dropped option alike" grid_dropped
# A setting on the command line that every --jsonl line sets (grid writes every key) is
# overridden: said on stderr, naming it; one that some line leaves out is not.
overridden() {
    printf '{"depth": 1, "attention": "softmax"}\n{"depth": 2}\n' |
        "$BIN" --batch --jsonl -T 8 -d 8 -L 4 -a markov --seeds 2 >"$tmp/out" 2>"$tmp/err" || return 1
    grep -qxF 'attnscope: warning: --depth 4 had no effect: every line sets "depth", which wins (a line'"'"'s settings replace the command line'"'"'s; leave the key out of the lines to take it from the command line)' "$tmp/err" &&
        [ "$(grep -c 'had no effect' "$tmp/err")" -eq 1 ] ||
        { echo "  stderr: $(head -c 600 "$tmp/err")"; return 1; }
}
check "--jsonl -L 4 -a markov, every line sets depth, one attention: --depth named, alone" overridden
finish
