#!/bin/bash
# The screen on a checkpoint's weights (--weights): the status line names it; the keys that
# would change what the weights fix (d, L; the initialisation) stay and say why; a key that
# changes the input (r, a new seed) works; the width sweep and the conditioning's other
# initialisation, which would need other weights, say so instead of computing.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings="-T 16 -d 16 -L 3 --heads 2 --mlp gelu --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $settings --export-weights "$TMP/w" 2>/dev/null
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --weights '$TMP/w'"
expect "the status line names the checkpoint" "weights=$TMP/w/model\.safetensors"
expect "and shows no σ_qk, which the weights do not have" "d=16"
check "... no σ_qk on it" absent "σ_qk="
press "D: d stays, the checkpoint's tensors fix it" "d stays at 16: the checkpoint's tensors fix it" D
press "L: the depth stays, the checkpoint holds 3 layers" "stays at 3: the checkpoint's tensors fix it \(it holds L = 3 layers of H = 2 heads" L
press "): the heads stay, the checkpoint's W^Q is split into 2" "H stays at 2: the checkpoint's tensors fix it" ')'
press "C: the initialisation stays, the weights are not drawn" "stays at normal: the weights are the checkpoint's, not drawn" C
press "r: a new seed draws a new input" "seed=2" r
check "... and no refusal with it" absent "seed stays"
press "v: the width sweep panel says the checkpoint fixes d" "no width sweep: the checkpoint's weights \(--weights\) fix d" v
keys v v v v v # gradient, similarity, entropy, attention map, conditioning
press "c in the conditioning view: no cutting-skip side, the weights are not drawn" "no cutting-skip side: the weights are the checkpoint's, not drawn" c
quits "q quits"
finish
