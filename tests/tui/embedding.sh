#!/bin/bash
# The embedding input on the screen: T = 64 > d = 16 runs to its last layer, the status line
# says the input, and no σ is claimed; = cycles the input back to orthonormal rows, which
# take T down to d, saying why; & cycles the depth scale, which says it is unused until there
# is a W^O or an MLP, and shows on the status line once there is one.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -d 16 -L 2 --input embedding --vocab 1000"
expect "T > d: the status line says the embedding input" "T=64 +d=16 .*X0=embedding"
expect "T > d: the last layer's stable rank is computed" "sr\(ℓ=2\)=[0-9]"
expect "T > d: the warning says why there is no σ" "embedding input \(V = 1000"
check "T > d: no σ readout" absent "σ=[0-9]"
press "=: orthonormal rows take T down to d" "tokens T lowered to 16 with d" '='
expect "=: T = d = 16 on the status line" "T=16 +d=16"
check "=: the input is the default, not shown" wait_gone "X0=embedding"
expect "=: σ is back" "σ=[0-9]"
press "&: the depth scale, unused without W^O or an MLP: the note says why it does nothing" \
    "not on factors|acts on a drawn W\^O" '&'
check "  and the status line leaves it out, as it acts on nothing" absent "depth scale="
press "X: an MLP, on which it acts: the status line shows it" "depth scale=none" X
quits "q quits"
finish
