#!/bin/bash
# The screen on a checkpoint's weights (--weights): the status line names it; the keys that
# would change what the weights fix (d, L, H, W^O; the initialisation, σ_qk and how W^O is
# drawn) stay and say why; a key that changes the input (r, a new seed) works; the width sweep and the conditioning's other
# initialisation, which would need other weights, say so instead of computing.  Each layer's
# read of the checkpoint is what the screen shows while it lasts ("reading layer 2/3"): the
# trace has one line per layer of a job, before that layer's computation.  What only says how
# weights are drawn (the scheme, its std, the depth scale, the sinks' spread) is on the status
# line of drawn weights and not on a checkpoint's.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings="-T 16 -d 16 -L 3 --heads 2 --mlp gelu --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $settings --export-weights "$TMP/w" 2>/dev/null
trace=$TMP/weights.trace
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --weights '$TMP/w' --trace '$trace'"
expect "the status line names the checkpoint" "weights=$TMP/w/model\.safetensors"
wait_trace " job-done gen=1 "
# The first job's reading and layer lines, in order: reading ℓ, then layer ℓ, for ℓ = 1..3.
order=$(grep -E " (reading|layer) gen=1 " "$trace" | sed -E 's/.* (reading|layer) gen=1 (seed=1 )?layer=([0-9]+\/[0-9]+).*/\1 \3/' | tr '\n' ',')
check "the trace says each layer is read before it is computed ($order)" \
    test "$order" = "reading 1/3,layer 1/3,reading 2/3,layer 2/3,reading 3/3,layer 3/3,"
expect "and shows no σ_qk, which the weights do not have" "d=16"
check "... no σ_qk on it" absent "σ_qk="
check "... nor the theory's σ, which σ_qk's draws make" absent "σ=[0-9]"
press "D: d stays, the tensor the new width needs in one shape and the file has in another" "d stays at 16: self_attn\.q_proj\.weight needs \[32, 32\], file has \[16, 16\]" D
press "L: the depth stays, the checkpoint holds 3 layers" "stays at 3: the checkpoint holds L = 3 layers of H = 2 heads" L
press "): the heads stay, the checkpoint's W^Q is split into 2" "H stays at 2: the checkpoint holds L = 3 layers of H = 2 heads" ')'
press "C: the initialisation stays, the weights are not drawn" "stays at normal: the weights are the checkpoint's, not drawn" C
press "S: σ_qk stays, the weights are not drawn" "σ_qk stays at 1: the weights are the checkpoint's, not drawn, so σ_qk does not apply" S
press "O: W^O stays Gaussian, how o_proj was drawn is not the checkpoint's to change" "W\^O stays at gaussian: the weights are the checkpoint's, not drawn, so W\^O=orthogonal" O
press "U: W^O stays, the identity would leave o_proj out" "W\^O stays at gaussian: the checkpoint's self_attn\.o_proj\.weight would be left out" U
press "r: a new seed draws a new input" "seed=2" r
check "... and no refusal with it" absent "seed stays"
wait_trace " job-done gen=2 "
check "... and reads the checkpoint's 3 layers again" test "$(grep -cE " reading gen=2 layer=[123]/3 " "$trace")" = 3
press "v: the width sweep panel says the checkpoint fixes d" "no width sweep: the checkpoint's weights \(--weights\) fix d" v
keys v v v v v # gradient, similarity, entropy, attention map, conditioning
press "c in the conditioning view: no cutting-skip side, the weights are not drawn" "no cutting-skip side: the weights are the checkpoint's, not drawn" c
quits "q quits"
# At 120 columns D's message fits on the message line whole, beside the time and the warnings.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --weights '$TMP/w'"
expect "a second screen, 120 columns wide, on the checkpoint" "computed in"
press "D at 120 columns: the whole message on one line" "d stays at 16: self_attn\.q_proj\.weight needs \[32, 32\], file has \[16, 16\]" D
quits "q quits the second"

# What says how weights are drawn shows on the status line of drawn weights, and not on a
# checkpoint's, where it has no effect (the settings table's in_use: "weights=none").
drawing="-T 16 -d 16 -L 2 --mlp gelu --wo gaussian --init gpt2 --init-std 0.03 --depth-scale total --sink 0 --sink-std 0.02"
# shellcheck disable=SC2086
"$BIN" $drawing --export-weights "$TMP/drawing" 2>/dev/null
drawn_fields=("init=gpt2" "S=0.03" "depth scale=total" "sink std=0.02")
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $drawing"
expect "drawn weights: the status line shows the scheme" "init=gpt2"
for field in "${drawn_fields[@]}"; do
    check "  and $field" shows "$field"
done
quits "q quits"
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $drawing --weights '$TMP/drawing'"
expect "the checkpoint of the same settings: its status line names it" \
    "weights=$TMP/drawing/model\.safetensors"
expect "  its result is in" "computed in [0-9]+ ms"
for field in "${drawn_fields[@]}"; do
    check "  no $field: the weights are not drawn" absent "$field"
done
check "  the sinks it reads are still said" shows "sink=0"
quits "q quits"
finish
