#!/bin/bash
# Silence where the theory does not apply, on screen: pre-LN with PyTorch's LayerNorm makes
# the first layer read rows of norm √d, so σ is not on the status line, the σ circle is not
# drawn, and the status line names why while the eigenvalues are shown; the default
# (post-LN) keeps them; a stable-rank curve whose limit leaves its range (below 1) is drawn
# only where it holds, and the legend says so.  Every session ends with q and checks the exit status.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

run() { # args...
    start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $*"
}

run -T 32 -d 32 -L 2 -n ln --ln-scale sqrt-d --ln-place post
expect "post-LN computes" "computed in [0-9]+ ms"
expect "post-LN: σ on the status line" "σ=1.311"
expect "post-LN: the σ circle in the legend" "\|z\| = σ = 1.31"
quits "post-LN"

run -T 32 -d 32 -L 2 -n ln --ln-scale sqrt-d --ln-place pre
expect "pre-LN computes" "computed in [0-9]+ ms"
expect "pre-LN: the status line says why the theory is silent" "⚠ pre-LN: the first layer"
check "pre-LN: no σ on the status line" absent "σ=[0-9]"
check "pre-LN: no σ circle in the legend" absent "\|z\| = σ"
expect "pre-LN: the unit circle stays" "\|z\| = 1, z = √T·λ"
quits "pre-LN"

# Softmax reads the tokens: its σ is layer 1's.  At layer 2 σ and its circle go, and a line
# says why; back at layer 1 they return.
run -T 32 -d 32 -L 3
expect "softmax computes" "computed in [0-9]+ ms"
expect "layer 1: σ on the status line" "σ=1.311"
press "]: layer 2, a line says the theory is layer 1's" "is layer 1's, on orthonormal tokens" "]"
expect "layer 2 is computed" "layer=2/3.*"
check "layer 2: no σ on the status line" wait_gone "σ=1.311"
check "layer 2: no σ circle in the legend" absent "\|z\| = σ"
press "[: layer 1, σ again" "σ=1.311" "["
check "and the line is gone" wait_gone "is layer 1's, on orthonormal tokens"
quits "softmax"

# Markov at T = d = 16: the gap-removed curve's limit C_ℓ·T is 1.05 at ℓ = 1 and 0.537 at
# ℓ = 2, where no stable rank can be.  At L = 1 both curves are drawn whole; L raises the depth
# to 2, and the legend says the curve is not drawn from there.
start 140 45 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 1 -a markov"
expect "markov, L = 1: computes, both theory curves" "theory \(docs/model.md §3\), both networks"
check "  in range: the legend names no end" absent "outside \[1, T\]"
press "L: depth 2, the legend says where the curve stops" "from ℓ = 2 \(outside \[1, T\]\)" L
quits "markov"

# At 80 columns the line is broken between words over two, its point (its end) on screen; so is
# the causal mask's, whose point is "so all real".
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 3"
expect "80×24: softmax computes" "computed in [0-9]+ ms"
press "]: layer 2 at 80 columns, the line's point shown" "reads the tokens the layers before it made" "]"
check "  its start on the line above" eval "screen | grep -q 'theory over these spectra'"
check "  nothing cut with an ellipsis" absent "on orthonormal tokens; this layer reads the…"
press "m: causal, the explanation's point shown at 80 columns" "so all real" m
quits "softmax at 80×24"
finish
