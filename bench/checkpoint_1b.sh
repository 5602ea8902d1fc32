#!/bin/bash
# A 1-billion-parameter BF16 checkpoint through every layer (issue 23, "Progress and cost"):
# writes the blocks of Llama 3.2 1B (d = 2048, 32 heads of 64, 8 key/value heads, 16 layers
# with a SwiGLU MLP of width 8192, RMSNorm before each sub-block: 0.97e9 weights, 1.95 GB in
# BF16) with --export-weights into a temporary directory, runs T = 512 tokens through it with --batch --weights --verbose, and reports
# the wall time and peak memory of that run (bench/peak_memory.py: the kernel's peak
# resident set, and the largest anonymous and file-backed parts seen).  The directory is
# removed at the end.  Needs ~2.2 GB of disk where TMPDIR points (default /tmp).
#
# usage: bench/checkpoint_1b.sh [BIN]       (BIN: build/attnscope)
#        LAYERS=4 bench/checkpoint_1b.sh    (a smaller model of the same layers, quicker)
cd "$(dirname "$0")/.." || exit 1
BIN=${1:-build/attnscope}
LAYERS=${LAYERS:-16}
PY=/usr/bin/python3
shape="-T 512 -d 2048 --heads 32 --kv-heads 8 -L $LAYERS --mlp swiglu --mlp-hidden 8192 --wo gaussian -n rms --ln-place pre"
dir=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-1b.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
echo "uptime: $(uptime)" >&2
echo "disk: $(df -h "$dir" | tail -1)" >&2

# shellcheck disable=SC2086
"$BIN" $shape --export-weights "$dir" --export-dtype bf16 || exit 1
bytes=$(stat -c %s "$dir/model.safetensors")
echo "checkpoint: $bytes bytes" >&2

# One layer's weights in double, as the layer step holds them: W^Q, W^K, W^V, W^O (d×d each,
# W^K and W^V whatever G) and the MLP's three N×d projections; and what the memory budget
# counts for the run (those, the T-size buffers of both networks, LAPACK's workspaces), which
# a budget of 1 byte makes it say.
layer_mib=$(( (4 * 2048 * 2048 + 3 * 8192 * 2048) * 8 / 1048576 ))
echo "one layer in double: $layer_mib MiB" >&2
# shellcheck disable=SC2086
"$BIN" --batch $shape --max-memory 1 2>&1 | sed -n 's/.*needs about \([0-9]*\) MiB.*/memory budget counts: \1 MiB/p' >&2
# shellcheck disable=SC2086
$PY bench/peak_memory.py "$BIN" --batch $shape --weights "$dir" --verbose --no-confirm \
    >"$dir/document.json"
status=$?
echo "document: $(wc -c <"$dir/document.json") bytes, exit $status" >&2
exit $status
