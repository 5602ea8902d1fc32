#!/bin/bash
# --seeds N > 1 where nothing is drawn from the seed: a checkpoint's weights and its embedding
# table read at the ids of --token-ids make every seed the same network on the same input, an
# ensemble of copies whose spread is 0.  Refused (exit 2, nothing on stdout, saying why), from
# the command line and from a preset alike; accepted where the seed still draws the ids (no
# --token-ids) or the table (no checkpoint), where the seeds then differ, and with a checkpoint
# a warning says that they vary the input alone, naming it.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tool=tests/cli/safetensors_tool.py
shape="-d 8 -L 2 --heads 2"

# shellcheck disable=SC2086
if ! "$BIN" -T 8 $shape --export-weights "$tmp/drawn" >/dev/null 2>&1 ||
    ! "$PY" $tool whole-model "$tmp/drawn/model.safetensors" "$tmp/ck.safetensors" 2>/dev/null; then
    skip "a checkpoint with its embedding table" "tests/cli/safetensors_tool.py could not write one"
    finish
    exit
fi
printf '1\n2\n3\n4\n5\n6\n0\n1\n' >"$tmp/ids.txt"
refused() { # message -- args...
    local message=$1
    shift 2
    "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    if [ $status -eq 2 ] && grep -qF -- "$message" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        return 0
    fi
    echo "  exit $status, stderr: $(head -c 400 "$tmp/err")"
    return 1
}
why="--seeds 3: every seed would run the same network on the same input, since neither its weights nor its input (the token ids of $tmp/ids.txt in model.embed_tokens.weight) are drawn from the seed: accepted 1"
# shellcheck disable=SC2086
check "checkpoint, its table, --token-ids, --seeds 3: refused, saying why" refused "$why" -- \
    --batch $shape --weights "$tmp/ck.safetensors" --token-ids "$tmp/ids.txt" --seeds 3
printf 'seeds = 3\n' >"$tmp/three.preset"
# shellcheck disable=SC2086
check "... --seeds 3 from a preset: refused the same" refused "$why" -- \
    --batch --preset "$tmp/three.preset" $shape --weights "$tmp/ck.safetensors" --token-ids "$tmp/ids.txt"
# shellcheck disable=SC2086
check "... without --batch (the screen): refused before it starts" refused "$why" -- \
    $shape --weights "$tmp/ck.safetensors" --token-ids "$tmp/ids.txt" --seeds 3
# shellcheck disable=SC2086
check "... one seed: accepted" bash -c \
    "'$BIN' --batch $shape --weights '$tmp/ck.safetensors' --token-ids '$tmp/ids.txt' >/dev/null 2>&1"

# Where the seed draws, the seeds differ: some layer's stable rank has a spread above 0.
spread() { # args...: exit 0 when some stable_rank_std is a positive number
    "$BIN" --batch "$@" >"$tmp/doc.json" 2>"$tmp/err" &&
        "$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))["stable_rank_std"]
sys.exit(0 if any(x is not None and x > 0 for x in s) else 1)' "$tmp/doc.json"
}
# shellcheck disable=SC2086
check "random ids in the checkpoint's table, --seeds 3: accepted, the seeds differ" \
    spread -T 8 $shape --weights "$tmp/ck.safetensors" --seeds 3
check "... and a warning says the seeds vary the input alone, naming it" grep -qF \
    "warning: --seeds 3 with --weights: every seed runs the checkpoint's weights, so the seeds vary the input alone (random ids, seeds 1 … 3 in model.embed_tokens.weight)" "$tmp/err"
# shellcheck disable=SC2086
check "the orthonormal input, --seeds 2: the warning names it" bash -c \
    "'$BIN' --batch -T 8 $shape --weights '$tmp/ck.safetensors' --input orthonormal --seeds 2 2>&1 >/dev/null |
     grep -qF 'so the seeds vary the input alone (the orthonormal input)'"
# shellcheck disable=SC2086
check "--token-ids in a drawn table, --seeds 3: accepted, the seeds differ" \
    spread $shape --input embedding --vocab 7 --token-ids "$tmp/ids.txt" --seeds 3
finish
