#!/bin/bash
# The status line and the gradient view say round-off where the numbers are round-off
# (docs/model.md §2, "Round-off from a layer on"): at the default settings the tokens are equal
# within round-off from layer 7, so sr(ℓ=8) reads "1 (round-off)", never "1+1.7e-60"; g removes
# the gap, and that network is rounding from layer 8: "round-off", and its gradients have no
# point (the legend says n/a, and no ● is drawn but the legend's).  Uniform attention is rank one
# by the settings: an exact 1.  An ensemble's status line reads the mean ± std over its seeds,
# as the panel's band, labelled.  The window mask's rows null for their logits' rounding (the
# entropy view, below).  Every check after a key waits for text that was not on the
# screen before it; every session ends with q and checks the exit status.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

run() { # cols rows args...
    local cols=$1 rows=$2
    shift 2
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $*"
}
# The ● on the screen: the gradient view's legend has one; a drawn point adds more.
filled_points() { screen | grep -o '●' | wc -l; }
one_filled_point() { [ "$(filled_points)" = 1 ]; }
more_filled_points() { [ "$(filled_points)" -gt 1 ]; }

run 120 40
expect "the default computes" "computed in [0-9]+ ms"
expect "sr at the last layer: 1, said to be round-off" "sr\(ℓ=8\)=1 \(round-off\)"
check "no round-off printed as sr − 1" absent "sr\(ℓ=8\)=1\+"
press "g: the gap-removed network is round-off at layer 8" "sr\(ℓ=8\)=round-off" g
expect "  and measured at layer 1" "sr\(ℓ=1\)=[0-9.]+ "
press "v v: its gradients have no point, the legend says so" "network \(gap center\) \(n/a\)" v v
expect "  the gradient view is shown" "gradient norm ‖∂X_L/∂W\^V_ℓ‖_F²"
check "  no ● drawn but the legend's" one_filled_point
press "g: the gap kept, its gradients are points again" "⠤●⠤ network \(gap off\)  " g
check "  ● drawn beside the legend's" more_filled_points
quits "default session"

# The window mask's rows' own rounding bound nulls them from layer 5 (docs/model.md §2): at
# the shown layer 6 the entropy view's histogram says so instead of drawing 256 NaN rows as a
# bar at 0, the curves stop at layer 4, and the status line reads n/a for the rows' numbers.
run 120 40 -m window -l 6
expect "the window mask computes, shown layer 6" "computed in [0-9]+ ms"
press "v v v v: the entropy view says the histogram is null for round-off" \
    "null: at this layer the rows' entropies are round-off" v v v v
check "  no row count drawn for it" absent "largest 1\.1, least 0"
expect "  its rows' numbers on the status line are n/a" "H/ln n=n/a  max A=n/a"
expect "  the warning names the first such layer" "attention rows of the network: from layer 5"
quits "window session"

run 120 40 -a uniform
expect "uniform attention: sr is 1 exactly by the settings" "sr\(ℓ=8\)=1$"
check "  not called round-off" absent "sr\(ℓ=8\)=1 \(round-off\)"
quits "uniform session"

run 120 40
expect "the default computes again" "computed in [0-9]+ ms"
press "E E: four seeds, the status line reads their mean and std, labelled" \
    "sr\(ℓ=1\)=[0-9.]+±[0-9.e-]+ \(mean of 4 seeds\)" E E
check "  not seed 1's 1.03 alone" absent "sr\(ℓ=1\)=1\.03  "
quits "ensemble session"
finish
