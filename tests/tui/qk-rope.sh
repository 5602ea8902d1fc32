#!/bin/bash
# The 2026 block's keys on the screen: H turns QK-norm on, and the σ readout and its circle
# go (σ_qk no longer sets the logits' spread) while the measured logit std stays; @ turns
# RoPE on and the status line says so; ^ orders the two, and says it is unused until both are
# on (as every key of an unused setting does, it still turns it).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2"
expect "the default shows σ and its circle" "σ=1.311 +logit std="
expect "the σ circle's legend" "\|z\| = σ = 1.31"
press "^ without RoPE: turned, and unused, says why" "it matters with both on" '^'
press "H: QK-norm over each head" "QK-norm=head" 'H'
expect "H: the measured logit std stays" "logit std=[0-9.]+ +1−\|λ2\|"
check "H: no σ readout" absent "σ=1.311"
check "H: no σ circle" absent "\|z\| = σ"
press "@: rotary positions, HF's halves" "RoPE=half" '@'
expect "@: the place ^ chose stays after-rope" "QK-norm@=after-rope"
keys '^'
check "^: back to QK-norm before RoPE, the default, not shown" wait_gone "QK-norm@"
quits "q quits"
finish
