#!/bin/bash
# The screen at 120×40: the three panels and their legends, the status line following
# every key of the screen, the help opening and closing, Ctrl-L, and q.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/keys.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 4 --trace '$trace'"
expect "the default computes and says how long it took" "computed in [0-9]+ ms"
expect "eigenvalue panel with its title" "^eigenvalues √T·λ of A, ℓ=1, T=256"
expect "histogram panel with its title" "singular values √T·s of A, ℓ=1, T=256"
expect "stable-rank panel with its title" "stable rank sr\(Σℓ\) against depth, log axis"
expect "eigenvalue legend: points, outlier, circles" "λ1 = 1, √T·\|λ1\| = 16 off scale"
expect "eigenvalue legend: σ circle" "\|z\| = σ = 1.31 .*\|z\| = 1"
expect "histogram legend: bars, overlay, s1 and the gap" "√T·s_i, i ≥ 2"
expect "histogram legend: the gap printed" "gap √T·\(s1−s2\) = [0-9.]+"
expect "histogram legend: the Markov-limit overlay" "i.i.d. Markov limit"
expect "stable-rank legend: network and ghost" "network \(gap off\) .*counterpart \(gap center\)"
expect "stable-rank legend: shown layer" "shown layer 1"
expect "status: parameters" "T=256 +d=256 +L=4 +σ_qk=1 +attn=softmax +mask=full +gap=off"
expect "status: readouts" "σ=1.311 +logit std=[0-9.]+ +1−\|λ2\|=[0-9.]+ +s1/s2=[0-9.]+"

press "T doubles T and raises d, saying so" "T=512 +d=512.*" T
expect "the note explains d" "d raised to 512 with T"
press "t halves T and lowers back the d it raised, saying so" "d lowered back to 256 \(T had raised it\)" t
expect "T and d are back" "T=256 +d=256"
press "D doubles d" "d=512" D
press "d halves d again" "d=256" d
press "L adds a layer" "L=5" L
press "l removes one" "L=4" l
press "S raises σ_qk by 2^¼" "σ_qk=1.19" S
press "s lowers it back" "σ_qk=1 " s
press "a: next attention kind" "attn=markov" a
expect "markov: the quartercircle law overlay" "quartercircle law"
press "A: previous kind" "attn=softmax" A
press "m: causal mask" "mask=causal" m
expect "causal: the eigenvalues are the exact diagonal" "eigenvalues exact: the diagonal"
press "M: back to full" "mask=full" M
press "M: previous wraps to window-causal" "mask=window-causal" M
press "W: window +1" "w=2" W
press "w: window -1" "w=1" w
press "m: wraps to full" "mask=full" m
press "n: LayerNorm next" "LN=rms" n
press "N: LayerNorm previous" "LN=none" N
press "k: skip next" "skip=plain" k
press "K: skip previous" "skip=none" K
press "g: gap removal on" "gap=center" g
expect "g: the legend names the counterpart" "network \(gap center\) .*counterpart \(gap off\)"
press "G: next gap mode" "gap=uniform" G
press "g: off again" "gap=off" g
press "]: next shown layer" "layer=2/4" "]"
expect "the panels follow the shown layer" "of A, ℓ=2, T=256"
press "[: previous layer" "layer=1/4" "["
press "Right: next layer" "layer=2/4" Right
press "Left: previous layer" "layer=1/4" Left
press "[ at layer 1 says why nothing changed" "layer 1 is the first" "["
press "r: new seed" "seed=2" r
press "|: an unbound key says so" "key \| does nothing; \? lists the keys" "|"
press "y: the attention map turns to the product" "map=product" y
keys y
check "y again: back to the layer's A" wait_gone "map=product"
press "? opens the help" "attnscope keys" "?"
expect "help lists the keys from the table" "T +tokens T ×2 "
expect "help lists the keys from the table, further down" "n +LayerNorm next"
expect "help lists Ctrl-L" "Ctrl-L +redraw the screen"
expect "help lists q (not the status line's hint)" "q {3,}quit"
expect "help says what closes it" "Esc, \? or q closes this help"
keys y
check "another key leaves the help open" wait_trace "key y help-open"
check "  and on the screen" shows "attnscope keys"
keys Escape
check "Esc closes the help" wait_gone "attnscope keys"
check "the key pressed in the help did nothing" bash -c "! tmux -L '$SOCKET' capture-pane -p | grep -q 'key y does nothing'"
# Garbage written straight to the terminal, as a stray message from another program would.
printf '\033[2J\033[1;1HGARBAGE-ON-THE-TERMINAL' >"$(tm display-message -p -t 0 '#{pane_tty}')"
expect "the garbage is on the screen" "GARBAGE-ON-THE-TERMINAL"
keys C-l
check "Ctrl-L: a full redraw removes it" wait_gone "GARBAGE-ON-THE-TERMINAL"
expect "Ctrl-L: and the screen is whole again" "stable rank sr.*"
expect "after all that, the settings and the readouts agree" "T=256 +d=256 +L=4 .*seed=2"
quits "q quits"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 4 --max-memory 40M"
expect "with a 40 MiB budget, T=256 runs" "computed in [0-9]+ ms"
press "T=512 would take more: refused with the reason and what set the budget" "needs about [0-9]+ MiB, above the memory budget of 40 MiB \(--max-memory\)" T
expect "and the settings stay" "T=256 +d=256"
keys q
finish
