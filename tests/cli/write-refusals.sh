#!/bin/bash
# A write never destroys what was there, and a refusal writes nothing.  --export-weights into
# the checkpoint --weights reads, or into a directory holding a checkpoint it did not write
# (a config.json, shards and their index, a model.safetensors of another writer), is refused
# before anything is computed, naming the option, the directory, what is there and what is
# accepted; an earlier --export-weights is replaced as before.  Every refusal of a --batch
# command (the time budget, an --export target, the weights inside --export's directory or
# --export inside the weights', a bad --jsonl line, a target that is a symbolic link to nothing)
# comes before the first write: exit 2, no directory made, an existing one's files
# byte-identical.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tool=tests/cli/safetensors_tool.py
base="-T 8 -d 8 -L 2 --heads 2"

# Every file under each directory with its SHA-256, into $tmp/FILE.
fingerprint() { # file directories...
    local out=$1
    shift
    find "$@" -type f -print0 | sort -z | xargs -0 sha256sum >"$out" 2>&1
}
# Exit 2, the message on stderr, nothing on stdout, and the directories as they were (or,
# named with a leading !, still absent).
refused_untouched() { # message dirs... -- args...
    local message=$1 dirs=() absent=() status
    shift
    while [ "$1" != -- ]; do
        case $1 in
        !*) absent+=("${1#!}") ;;
        *) dirs+=("$1") ;;
        esac
        shift
    done
    shift
    [ ${#dirs[@]} -eq 0 ] || fingerprint "$tmp/before" "${dirs[@]}"
    "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    [ ${#dirs[@]} -eq 0 ] || fingerprint "$tmp/after" "${dirs[@]}"
    if [ $status -eq 2 ] && grep -qF -- "$message" "$tmp/err" && [ ! -s "$tmp/out" ] &&
        { [ ${#dirs[@]} -eq 0 ] || cmp -s "$tmp/before" "$tmp/after"; } &&
        { [ ${#absent[@]} -eq 0 ] || [ -z "$(ls -d "${absent[@]}" 2>/dev/null)" ]; }; then
        return 0
    fi
    echo "  exit $status, stderr: $(head -c 500 "$tmp/err")"
    [ ${#dirs[@]} -eq 0 ] || diff "$tmp/before" "$tmp/after" | head -5
    [ ${#absent[@]} -eq 0 ] || ls -d "${absent[@]}" 2>/dev/null
    return 1
}

# Refusals before the first write.
# shellcheck disable=SC2086
# The rate pinned low: at this size the measured estimate is ~0.00014 s, close enough to
# 0.0001 s that a fast moment of a shared machine would let the run through.
ATTNSCOPE_GFLOPS=1e-4 check "--max-time refusal: exit 2, no --export-weights directory made" refused_untouched \
    "above 0.0001 s (--max-time)" "!$tmp/ew" -- --batch $base --export-weights "$tmp/ew" --max-time 0.0001
# shellcheck disable=SC2086
check "--export-weights into --export's own directory: refused, neither made" refused_untouched \
    "--export-weights '$tmp/ew2': it is --export '$tmp/ew2' or lies within it" "!$tmp/ew2" -- \
    --batch $base --export-weights "$tmp/ew2" --export "$tmp/ew2"
mkdir "$tmp/set" && ln -s "$tmp/set" "$tmp/link"
# shellcheck disable=SC2086
check "--export-weights inside --export's directory (through a link): refused, it stays empty" \
    refused_untouched "--export-weights '$tmp/link/w': it is --export '$tmp/set' or lies within it" \
    "$tmp/set" -- --batch $base --export-weights "$tmp/link/w" --export "$tmp/set"
check "... nothing made in it" test -z "$(ls -A "$tmp/set")"
# shellcheck disable=SC2086
check "--export inside --export-weights' directory: refused, neither made" refused_untouched \
    "--export '$tmp/ew4/config.json': it lies within --export-weights '$tmp/ew4'" "!$tmp/ew4" -- \
    --batch $base --export-weights "$tmp/ew4" --export "$tmp/ew4/config.json"
# A symbolic link to nothing, as the target or above it: refused before computing (--export
# found it only when it put its files in place, after the run: exit 1), the link unchanged.
ln -s "$tmp/nowhere" "$tmp/dangling"
for option in --export --export-weights; do
    for target in "$tmp/dangling" "$tmp/dangling/x"; do
        [ "$target" = "$tmp/dangling" ] && said=it || said=$tmp/dangling
        # shellcheck disable=SC2086
        check "$option $target, a link to nothing: refused before computing, naming it" \
            refused_untouched "$option '$target': $said is a symbolic link to '$tmp/nowhere', which does not exist" \
            "!$tmp/nowhere" -- --batch $base $option "$target"
        check "... the link unchanged" test "$(readlink "$tmp/dangling")" = "$tmp/nowhere"
    done
done
# --jsonl: each line describes its own model, so --export-weights (which would write the
# command line's) is refused before any line runs, naming both; nothing is made.
jsonl_weights_refused() {
    # shellcheck disable=SC2086
    echo '{"T": 8, "depth": 3}' | "$BIN" --batch $base --jsonl --export-weights "$tmp/j1" \
        >"$tmp/jsonl.out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && [ ! -s "$tmp/jsonl.out" ] && [ ! -e "$tmp/j1" ] &&
        grep -qF -- "--export-weights '$tmp/j1': accepted only without --jsonl" "$tmp/err" ||
        { echo "  exit $status: $(head -c 300 "$tmp/err")"; return 1; }
}
check "--jsonl with --export-weights: refused (exit 2), nothing written, no directory" jsonl_weights_refused
touch "$tmp/plain"
# shellcheck disable=SC2086
check "an --export target that is a file: refused before the weights are written" refused_untouched \
    "--export '$tmp/plain': it exists and is not a directory" "!$tmp/ew3" -- \
    --batch $base --export-weights "$tmp/ew3" --export "$tmp/plain"
# An earlier export, then a refused command: its files byte-identical.
# shellcheck disable=SC2086
"$BIN" $base --export-weights "$tmp/earlier" 2>/dev/null
# shellcheck disable=SC2086
ATTNSCOPE_GFLOPS=1e-4 check "an earlier export, then a --max-time refusal: its files byte-identical" refused_untouched \
    "(--max-time)" "$tmp/earlier" -- --batch $base --seed 5 --export-weights "$tmp/earlier" --max-time 0.0001
mkdir "$tmp/apart"
# shellcheck disable=SC2086
check "--export-weights beside --export elsewhere: both written" bash -c \
    "'$BIN' --batch $base --export-weights '$tmp/apart/../w' --export '$tmp/apart' >/dev/null 2>&1 &&
     [ -s '$tmp/w/model.safetensors' ] && [ -s '$tmp/apart/layers.csv' ]"

# Checkpoints that are not --export-weights' own.
ck=$tmp/ck
if "$PY" $tool shard "$tmp/earlier/model.safetensors" "$ck" 2>/dev/null; then
    printf '{"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2}\n' >"$ck/config.json"
    # shellcheck disable=SC2086
    check "--weights DIR --export-weights DIR (sharded): refused, the checkpoint byte-identical" \
        refused_untouched "--export-weights '$ck': it is the directory of the checkpoint --weights reads ('$ck')" \
        "$ck" -- $base --weights "$ck" --export-weights "$ck" --export-dtype bf16
    check "... the message says what is accepted" grep -qF "accepted another one, a new or empty directory" "$tmp/err"
    # shellcheck disable=SC2086
    check "--batch, the same: refused before computing" refused_untouched \
        "--export-weights '$ck': it is the directory of the checkpoint --weights reads" \
        "$ck" -- --batch $base --weights "$ck" --export-weights "$ck"
    # shellcheck disable=SC2086
    check "another checkpoint's directory (shards, index, config.json): refused, byte-identical" \
        refused_untouched "--export-weights '$ck': the directory holds a checkpoint that --export-weights did not write (" \
        "$ck" -- $base --weights "$tmp/earlier" --export-weights "$ck"
    for name in config.json model.safetensors.index.json model-00001-of-00002.safetensors model-00002-of-00002.safetensors; do
        check "... it names $name" grep -qF "$name" "$tmp/err"
    done
    check "... and what is accepted" grep -qF "accepted a new or empty directory, one without a checkpoint, or one holding an earlier --export-weights" "$tmp/err"
    mkdir "$tmp/cfg" && cp "$ck/config.json" "$tmp/cfg/" && echo keep >"$tmp/cfg/notes.txt"
    # shellcheck disable=SC2086
    check "a directory holding another model's config.json alone: refused" refused_untouched \
        "did not write (config.json)" "$tmp/cfg" -- $base --export-weights "$tmp/cfg"
    mkdir "$tmp/theirs"
    "$PY" -c "
import sys; sys.path.insert(0, 'scripts')
from safetensors_file import PYTORCH, read, write
tensors, _ = read(sys.argv[1]); write(sys.argv[2], tensors, PYTORCH)" \
        "$tmp/earlier/model.safetensors" "$tmp/theirs/model.safetensors"
    # shellcheck disable=SC2086
    check "a model.safetensors another writer wrote: refused" refused_untouched \
        "did not write (model.safetensors)" "$tmp/theirs" -- $base --export-weights "$tmp/theirs"
else
    skip "checkpoints not --export-weights' own" "tests/cli/safetensors_tool.py could not run"
fi
# The export's own, read by --weights: refused; not read: replaced, other files kept.
# shellcheck disable=SC2086
check "--weights DIR/model.safetensors --export-weights DIR (an earlier export): refused" \
    refused_untouched "it is the directory of the checkpoint --weights reads" "$tmp/earlier" -- \
    $base --weights "$tmp/earlier/model.safetensors" --export-weights "$tmp/earlier"
echo keep >"$tmp/earlier/notes.txt"
# shellcheck disable=SC2086
check "an earlier export re-exported: replaced, other files kept" bash -c \
    "'$BIN' $base --seed 7 --export-weights '$tmp/earlier' 2>/dev/null &&
     grep -qF '\"seed\":7' '$tmp/earlier/config.json' && [ \"\$(cat '$tmp/earlier/notes.txt')\" = keep ]"
# An export of a checkpoint whose family scales its embeddings, run with that family's block
# (Gemma 2's), names the family (model_type) in its config.json: still the export's own, replaced
# by the next one; a config.json carrying a model_type and attnscope_version but no settings
# object is not.
gemma=$tmp/gemma
scaled="--mlp geglu -n rms --ln-place peri --rope half --skip plain --ln-scale sqrt-d --wo gaussian -m causal"
# shellcheck disable=SC2086
if "$BIN" $base $scaled --vocab 7 --export-weights "$tmp/llama" >/dev/null 2>&1 && mkdir "$gemma" &&
    "$PY" $tool whole-model "$tmp/llama/model.safetensors" "$gemma/model.safetensors" 2>/dev/null; then
    printf '{"model_type": "gemma2", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2}\n' >"$gemma/config.json"
    # shellcheck disable=SC2086
    check "a Gemma checkpoint exported: its config.json names the family" bash -c \
        "'$BIN' --batch $base $scaled --weights '$gemma' --export-weights '$tmp/g-out' >/dev/null 2>&1 &&
         grep -qF '\"model_type\": \"gemma2\"' '$tmp/g-out/config.json'"
    # shellcheck disable=SC2086
    check "... exported again into the same directory: replaced" bash -c \
        "'$BIN' --batch $base $scaled --seed 7 --weights '$gemma' --export-weights '$tmp/g-out' >/dev/null 2>&1 &&
         grep -qF '\"seed\":7' '$tmp/g-out/config.json'"
    mkdir "$tmp/unsettled" && "$PY" -c "
import json, sys
c = json.load(open(sys.argv[1])); del c['attnscope']; json.dump(c, open(sys.argv[2], 'w'))" \
        "$tmp/g-out/config.json" "$tmp/unsettled/config.json"
    # shellcheck disable=SC2086
    check "a config.json with model_type and attnscope_version, without the settings: refused" \
        refused_untouched "did not write (config.json)" "$tmp/unsettled" -- $base --export-weights "$tmp/unsettled"
else
    skip "an earlier export of a Gemma checkpoint" "tests/cli/safetensors_tool.py could not run"
fi
finish
