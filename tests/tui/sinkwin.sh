#!/bin/bash
# Sinks and per-layer windows on the screen: % turns a sink on (0, a real sink), the status
# line says so, the readouts measured against λ1 = 1 turn n/a and the warning says why; %
# steps on and comes back to none.  ; gives the window mask's layers a pattern: the status
# line names it and the stable-rank panel marks the window layers (▾) with a legend entry
# (tmux reads a bare ; as its own command separator: the script sends \;).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 12 -m window-causal -w 3"
expect "the start: window-causal, no pattern, no sink" "mask=window-causal +w=3 +gap=off"
expect "the start: 1−|λ2| is measured" "1−\|λ2\|=[0-9]"
press "%: a sink of 0" "sink=0( |$)" '%'
expect "%: 1−|λ2| and the count above 0.5 are n/a" "1−\|λ2\|=n/a .*\|λ\|>0.5=n/a"
expect "%: the warning says why" "sinks \(s = 0\): each row sums to 1 minus"
press "% again: 1" "sink=1( |$)" '%'
keys '%' '%' '%' '%'
check "%×4 more: back to none, not shown" wait_gone "sink="
press ";: window layers 1:1" "w layers=1:1" '\;'
expect ";: the legend names the marks" "▾ window-causal layers \(w = 3\), others causal: 1:1"
press "; again: 5:1" "w layers=5:1" '\;'
keys '\;'
check "; again: all, not shown" wait_gone "w layers="
check "; again: the marks' legend goes" wait_gone "window-causal layers \(w = 3\)"

# Random presses of the two keys among the mask's, the window's, the gap's and the shown
# layer's (seeded: the same sequence every run): the screen keeps answering and q still quits
# with status 0 (under ASan/TSan: BIN=build-asan/attnscope, build-tsan with
# OPENBLAS_NUM_THREADS=1).
RANDOM=22
pool=('%' '\;' m M w W g G '[' ']' l L)
for _ in $(seq 80); do
    keys "${pool[RANDOM % ${#pool[@]}]}"
done
press "after 80 random keys the screen answers (o: overlays off)" "theory overlays off" o
quits "q quits"
finish
