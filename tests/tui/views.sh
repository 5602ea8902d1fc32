#!/bin/bash
# The views of issue 3 at 140×44: the overlay key changes the legends, the view key cycles
# the main panel through stable rank, width sweep, gradient norms, token similarity and the
# conditioning (the eigenvalue and histogram panels stay, but for the conditioning's histogram), the compare key shows the network without and
# with gap removal side by side, and the ensemble keys draw a band.  A view change redraws
# from the snapshot: the trace shows a frame after the key with no new job.  > and < step
# through the classroom tour; x exports the shown result.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/views.trace
# The conditioning's path is pinned (Lanczos): the checks below read its path line.
start 140 44 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -a markov -T 64 -d 64 -L 3 --conditioning-path lanczos --trace '$trace'"
expect "markov computes" "computed in [0-9]+ ms"
expect "overlays on by default: predicted curves in the legend" "theory \(docs/model.md §3\)"
expect "and the quartercircle density" "quartercircle law"
press "o turns the overlays off, saying so" "theory overlays off" o
check "o: the predicted curves leave the legend" wait_gone "theory \(docs/model.md §3\)"
check "o: the density leaves the histogram legend" wait_gone "quartercircle law"
expect "o: the circles stay" "\|z\| = σ = [0-9.]+"
press "o again: back on" "theory \(docs/model.md §3\)" o

press "v: the width sweep" "width sweep: sr\(Σℓ\) − 1 at ℓ=1 against T" v
expect "the sweep arrives with its fitted slopes" "fitted slopes -?[0-9.]+ \(gap off\)"
expect "and the theory slope for markov" "theory slope 1−2ℓ = -1"
expect "the eigenvalue panel stays" "^eigenvalues √T·λ of A"
expect "the histogram stays" "singular values √T·s of A"
# A view change that needs nothing new is one frame, no job: mark the trace, then cycle.
before=$(grep -c 'job-start' "$trace")
press "v: gradient norms, by layer" "gradient norm ‖∂X_L/∂W\^V_ℓ‖_F², attention frozen, log axis" v
expect "gradient legend names both networks" "network \(gap off\) .*counterpart \(gap center\)"
press "v: token similarity" "token similarity μ\(Xℓ\)/μ\(X0\) against depth" v
press "v: the entropy view, against depth" "row entropy H \(nats\) against depth" v
expect "its histogram of the shown layer's rows" "row entropies H_i, ℓ=1"
expect "its readouts on the status line" "H/ln n=[0-9.]+ +max A=[0-9.]+"
press "v: the attention map" "attention map A \(as built\), ℓ=1" v
after=$(grep -c 'job-start' "$trace")
check "gradient, similarity, entropy and the map started no job" test "$before" -eq "$after"
press "v: the conditioning, its own job (every layer beyond Lanczos's reach: bounds only)" "κ\(K\) bounds only" v
check "the conditioning was computed by the worker" grep -q "conditioning-done" "$trace"
before=$(grep -c 'job-start' "$trace")
press "v: back to the stable rank" "stable rank sr\(Σℓ\) against depth" v
press "V: the conditioning again, kept" "κ\(K\) bounds only" V
press "V: the attention map again" "attention map A" V
press "V: back to the entropy view" "row entropy H \(nats\)" V
press "V: token similarity" "token similarity μ" V
after=$(grep -c 'job-start' "$trace")
check "stable rank, entropy, similarity and the kept conditioning started no job" test "$before" -eq "$after"
press "V again: gradient norms" "gradient norm" V
press "k with the gradient view: a skip has no gradient formula" "needs no skip and no LayerNorm" k
press "K: back to no skip" "skip=none" K
expect "and the gradient curves again" "at full depth L, attention frozen"
press "V: width sweep, recomputed for the new settings" "width sweep: sr" V
expect "sweep done" "fitted slopes"
press "v v v v v v: stable rank" "stable rank sr\(Σℓ\)" v v v v v v

press "c: the compare view, left half" "WITHOUT gap removal \(gap off\): eigenvalues" c
expect "c: right half, same weights with the gap removed" "WITH gap removal \(gap center\): eigenvalues"
expect "c: both stable-rank panels" "this network \(gap off\).*this network \(gap center\)"
press "c again: the three panels" "^eigenvalues √T·λ of A" c
check "c: the halves are gone" wait_gone "WITHOUT gap removal"

press "E: two seeds" "seeds=2" E
expect "the ensemble's band in the legend" "±1 std over 2 seeds"
expect "and the curves are its mean" "network \(gap off\), mean"
keys e
check "e: back to one seed" wait_gone "seeds=2"
check "the band is gone" wait_gone "std over"

press "a: relu" "attn=relu" a
expect "relu: the predicted outlier" "predicted λ1 = [0-9.]+"
press "A A: softmax" "attn=softmax" A A
expect "softmax: the note instead of a curve" "no theory curve: "
expect "softmax: the density is the i.i.d. Markov limit" "i.i.d. Markov limit"

press "? lists the new keys" "o +theory overlays on / off" "?"
expect "help: view and compare keys" "v +view: rank/…/map/cond"
expect "help: compare" "c +compare"
expect "help: ensemble" "E +ensemble seeds ×2"
keys Escape
check "Esc closes the help" wait_gone "attnscope keys"
quits "q quits"

# The tour and the export, run from an empty directory (the tour found by $ATTNSCOPE_TOUR).
mkdir -p "$TMP/out"
tour=$(pwd)/presets/tour
start 140 44 "cd '$TMP/out' && env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_TOUR='$tour' XDG_CONFIG_HOME='$TMP/config' '$BIN' -T 32 -d 32 -L 3 -s 0.75"
expect "small run computes" "computed in [0-9]+ ms"
press "x asks for a directory" "directory: _" x
press "Enter with none: a directory named by the time, and the export says where" "exported 8 files to attnscope-[0-9-]+/" Enter
check "the export wrote the per-layer CSV" bash -c "ls '$TMP'/out/attnscope-*/layers.csv"
press "x again" "directory: _" x
keys -l "/proc/attnscope-no-such-place"
press "a directory that cannot be written: the export says why" "export failed: " Enter
expect "and the prompt stays open to change it" "directory: /proc/attnscope-no-such-place_"
keys BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace
keys -l "$TMP/out/named export"
press "a directory typed at the prompt, spaces and all" "exported 8 files to .*/named export/" Enter
check "it holds the SVG of every plot" bash -c "ls '$TMP/out/named export'/eigenvalues.svg '$TMP/out/named export'/singular_values.svg '$TMP/out/named export'/stable_rank.svg '$TMP/out/named export'/entropy.svg"
press "x, then Esc: nothing exported" "not exported" x Escape
same_layers_csv() { # the screen's layers.csv is the one --batch --export writes for the same settings
    "$BIN" --batch -T 32 -d 32 -L 3 -s 0.75 --export "$TMP/batch-export" >/dev/null 2>&1 &&
        cmp "$TMP/batch-export/layers.csv" "$(ls -d "$TMP"/out/attnscope-*/ | head -n 1)/layers.csv"
}
check "x writes layers.csv byte for byte as --export does (one schema, same numbers)" same_layers_csv
press "p asks for the preset's name" "name: _" p
press "Enter with no name: named by the time, saying where" "saved .*/attnscope/presets/attnscope-[0-9-]+\.preset" Enter
saved=$(find "$TMP/config/attnscope/presets" -name "attnscope-*.preset" 2>/dev/null | head -n 1)
check "the saved preset loads in batch mode with the same settings" bash -c \
    "'$BIN' --batch --preset '$saved' | grep -q '\"T\":32,\"d\":32,\"d_qk\":32,\"depth\":3,\"sigma_qk\":0.75'"
press "<: before the tour, nothing to go back to" "the tour has 11 steps" "<"
press ">: tour step 1, its title in the status line" "Tour 1/11: one attention matrix has a gap" ">"
expect "step 1's settings" "T=256 +d=256 +L=8"
press ">: step 2 removes the gap" "Tour 2/11: remove the gap" ">"
expect "step 2's settings" "gap=center"
press "<: back to step 1" "Tour 1/11" "<"
expect "step 1 again" "gap=off"
quits "q quits"

# The preset picker (P) and named saves (p), with the shipped presets found by
# $ATTNSCOPE_PRESETS and the user's under $XDG_CONFIG_HOME.
start 140 44 "cd '$TMP/out' && env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' XDG_CONFIG_HOME='$TMP/picker' '$BIN' -T 32 -d 32 -L 3"
expect "picker run computes" "computed in [0-9]+ ms"
shipped=$(find presets -name '*.preset' | wc -l)
press "P opens the picker with every shipped and tour preset" "presets \($shipped\): " P
expect "the tour's first step comes first, selected" "> 01-one-matrix-has-a-gap +tour"
expect "its header comment beside the list" "Tour 1/11: one attention matrix has a gap"
expect "and its path" "presets/tour/01-one-matrix-has-a-gap\.preset"
press "j moves the selection, the header follows" "> 02-remove-the-gap +tour" j
expect "the new header" "Tour 2/11: remove the gap"
keys j j j j j j j j
press "j: the last tour step, before the shipped presets" "> 11-entropy-qk-norm +tour" j
expect "the first shipped preset follows it" "  depth-markov-gap +shipped"
press "Enter loads it and closes the picker" "loaded tour preset 11-entropy-qk-norm" Enter
check "the picker closed" wait_gone "presets \([0-9]+\): "
expect "the preset's settings" "LN=ln +skip=scaled"
press "> after a tour step loaded from the picker: the tour knows where it is" "the tour has 11 steps; this is step 11" ">"
press "p: the name prompt" "name: _" p
keys c l a s s
press "refused characters say what a name may hold, and why" "\\\$ refused: a preset's name is its file name" '$'
press "the name so far stays, and - is allowed" "name: class-_" -
keys d e m o
press "Enter saves under the name, saying what was left out of it" "saved .*/attnscope/presets/class-demo\.preset; left out of the name: '\\\$'" Enter
named=$TMP/picker/attnscope/presets/class-demo.preset
check "its header names it and what it shows" grep -q "^# class-demo: saved from the attnscope screen" "$named"
check "the named preset loads in batch mode with the same settings" bash -c \
    "'$BIN' --batch --preset '$named' | grep -q '\"layernorm\":\"ln\",\"skip\":\"scaled\"'"
before=$(md5sum <"$named")
press "p with a name that is taken" "name: _" p
keys c l a s s - d e m o Enter
expect "is refused, saying so" "a preset named class-demo exists: choose another name"
expect "and the prompt stays open to change the name" "name: class-demo_"
check "the first file is untouched" test "$(md5sum <"$named")" = "$before"
press "Esc cancels" "not saved" Escape
check "the prompt closed" wait_gone "name: class-demo_"
press "P: the user's preset is listed as yours" "presets \([0-9]+\): " P
expect "the picker reopens at the preset loaded last" "> 11-entropy-qk-norm +tour"
press "End reaches it" "> class-demo +yours" End
expect "with its header" "class-demo: saved from the attnscope screen"
keys Escape
check "Esc closes the picker" wait_gone "presets \([0-9]+\): "
expect "and the panels are back" "computed in"
press "p: a name typed with a space" "name: _" p
keys m y Space f i r s t Enter
expect "saved as written to disk, the space said to be left out" "saved .*/attnscope/presets/myfirst\.preset; left out of the name: ' '"
check "  and that is the file" test -s "$TMP/picker/attnscope/presets/myfirst.preset"
quits "q quits"

# Every view in ASCII (LANG=C): no byte above 0x7F.
no_high_bytes() { # file
    ! LC_ALL=C grep -q '[^[:print:][:space:]]' "$1" && ! LC_ALL=C grep -qP '[\x80-\xff]' "$1"
}
start 140 44 "env LANG=C LC_ALL=C '$BIN' -a relu -T 32 -d 32 -L 3 --seeds 2"
expect "LANG=C: computes" "computed in [0-9]+ ms"
for view in "width sweep: sr" "gradient norm" "token similarity mu" "row entropy H" "attention map A" "kappa of the attention"; do
    press "LANG=C: v shows the $view view" "$view" v
    screen >"$TMP/ascii.txt"
    check "LANG=C: the $view view is ASCII" no_high_bytes "$TMP/ascii.txt"
done
press "LANG=C: v back to the stable rank" "stable rank sr" v
press "LANG=C: the compare view" "WITHOUT gap removal" c
screen >"$TMP/ascii.txt"
check "LANG=C: the compare view is ASCII" no_high_bytes "$TMP/ascii.txt"
press "LANG=C: the preset picker, arrows spelled out" "presets \([0-9]+\): Up/Down or j/k choose" P
screen >"$TMP/ascii.txt"
check "LANG=C: the picker is ASCII" no_high_bytes "$TMP/ascii.txt"
keys Escape
check "LANG=C: Esc closes it" wait_gone "Up/Down or j/k choose"
press "LANG=C: the name prompt" "name: _" p
screen >"$TMP/ascii.txt"
check "LANG=C: the name prompt is ASCII" no_high_bytes "$TMP/ascii.txt"
press "LANG=C: Esc cancels" "not saved" Escape
quits "q quits"

# The ensemble grows in the background: while later seeds compute, the panel shows the mean
# and band of the seeds done so far (a seed takes tenths of a second here, the screen is
# polled every tenth), then the whole ensemble.
start 140 44 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -a markov -T 384 -d 384 -L 4 --seeds 16"
# (the title wraps two columns short of the panel: "seeds)" may go to its second row)
expect "the band grows seed by seed" "mean ± 1 std, ([2-9]|1[0-5])/16( seeds|$)"
expect "then covers the whole ensemble" "mean ± 1 std\)"
expect "with all 16 seeds in the legend" "±1 std over 16 seeds"
quits "q quits"
finish
