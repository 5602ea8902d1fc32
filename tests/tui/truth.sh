#!/bin/bash
# The screen says only what is true and hides nothing it knows: the outlier marked only when
# there is one and where gap removal sent it, readouts n/a where undefined, "? help" and the
# warnings count always on the message line, ! listing every warning, the causal explanation
# kept under a note, t undoing the d that T raised, F1 and h opening the help, Esc, ? and q
# closing it, keys named as people write them.  Every session ends with q and checks the
# exit status; every check after a key waits for text that was not on the screen before it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Runs the binary in a shell that prints its exit status when it ends.
run() { # cols rows args...
    local cols=$1 rows=$2
    shift 2
    start "$cols" "$rows" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $*"
}

run 120 40 -T 64 -d 64 -L 8
expect "the default computes" "computed in [0-9]+ ms"
expect "? help ends the message line at 120 columns" "\? help(  q quit)?$"
# The count is that of the list ! opens (tests/tui/warnings-count.sh), which holds the hidden
# similarity panel's warning too; its text waits for its panel.
expect "the warnings ! lists are counted on the line, the hidden panel's among them" "! [0-9]+ warning"
check "the token-similarity warning is not on the line while its panel is hidden" absent "⚠ token similarity"
# The status line picks a warning by what it is about: the similarity warning shows while its
# panel does, and goes with it.
press "v v v: the similarity panel brings its warning to the status line" "⚠ token similarity" v v v
expect "the similarity panel is the one shown" "token similarity μ\(Xℓ\)/μ\(X0\)"
expect "its warnings are counted now, ! reads them" "! 2 warnings  \? help$"
keys V V V
check "V V V: the stable ranks again, and the similarity warning is gone" wait_gone "⚠ token similarity"
expect "the stable-rank panel is back" "stable rank sr\(Σℓ\) against depth"
expect "softmax: the outlier is marked" "λ1 = 1, √T·\|λ1\| = 8"
expect "the unit circle's z is defined" "\|z\| = 1, z = √T·λ"
expect "the eigenvalue axes are named" "Re z"
expect "the stable rank at the shown layer and at the last" "sr\(ℓ=1\)=[0-9.]+ +sr\(ℓ=8\)="
press "! opens the list of every warning" "warnings of the shown result \([0-9]+\)" "!"
# the logits' bound nulls nothing here: the rows are null for the tokens' round-off first
expect "the list holds the warning" "1\. token similarity of the network"
expect "in full" "so it is not shown there"
press "↓ scrolls to the next warning" "more above: ↑" Down
expect "which is now first" "2\. token similarity of the counterpart"
keys Escape
check "Esc closes the list" wait_gone "warnings of the shown result"
press "g: the outlier went to 0, marked and named" "λ1: 1 → 0 \(gap removed\)" g
check "g: no eigenvalue of the bulk is highlighted as λ1" absent "λ1 = -?0\.0"
check "g: the spectral gap of a non-stochastic matrix is n/a" wait_for "1−\|λ2\|=n/a"
press "g again: the outlier is back" "λ1 = 1, √T·\|λ1\| = 8" g
press "S S S: σ = 55 is named off scale" "\|z\| = σ = 54.6 off scale" S S S
expect "and the quartercircle too" "off scale \(edge 2σ = 109\)"
press "s s s: back" "σ_qk=1 " s s s
press "m: causal, the explanation line" "eigenvalues exact: the diagonal of the triangular A" m
press "[ at layer 1: a note" "layer 1 is the first" "["
check "the explanation stays with the note on screen" bash -c "tmux -L '$SOCKET' capture-pane -p | grep -q 'eigenvalues exact: .*so all real'"
quits "first session"

trace=$TMP/truth.trace
run 120 40 -T 32 -d 32 -L 1 --trace "$trace"
expect "T = d = 32 computes" "computed in [0-9]+ ms"
press "T×4: d raised with T" "T=512 +d=512" T T T T
press "t: T halves and d comes back down, saying so" "d lowered back to 256 \(T had raised it\)" t
expect "the status line agrees" "T=256 +d=256"
press "F1 opens the help" "attnscope keys" F1
expect "the help says what closes it" "Esc, \? or q closes this help"
keys z
check "another key leaves the help open" wait_trace "key z help-open"
check "  and on the screen" shows "attnscope keys"
keys q
check "q closes the help" wait_gone "attnscope keys"
check "and does not quit" wait_for "T=256 +d=256"
check "the z pressed in the help did nothing" absent "key z does nothing"
press "h opens the help" "attnscope keys" h
keys "?"
check "? closes it" wait_gone "attnscope keys"
press "Space is named" "key Space does nothing" Space
press "Esc with nothing running says it has nothing to cancel" "Esc cancels a running job or export: none runs" Escape
press "F5 is named" "key F5 does nothing" F5
press "Enter is named" "key Enter does nothing" Enter
quits "second session"

run 120 40 -T 64 -d 64 -L 2 -a linear
expect "linear attention computes" "computed in [0-9]+ ms"
expect "linear: no outlier, and why" "no outlier: \|λ1\| < 2\|λ2\|"
expect "linear: 1−|λ2| and the count are n/a, σ is not shown" "logit std=[0-9.]+ +1−\|λ2\|=n/a +s1/s2=[0-9.]+ +\|λ\|>0.5=n/a"
check "linear: no σ on the status line" absent "σ=[0-9]"
quits "third session"

# Identity attention with the full mask: A = I, whose eigenvalues are exact because it is
# diagonal, not because a causal mask made it triangular.
run 120 40 -T 32 -d 32 -L 2 -a identity
expect "identity attention computes" "computed in [0-9]+ ms"
expect "identity, full mask: the exact eigenvalues said to be a diagonal A's" "eigenvalues exact: A is diagonal"
check "identity, full mask: no triangular A described" absent "triangular"
quits "identity session"

# σ_qk is on the status line only where it acts: --init gpt2 draws W^Q, W^K itself.
run 120 40 -T 32 -d 32 -L 2 --init gpt2
expect "--init gpt2 computes" "computed in [0-9]+ ms"
expect "the status line names the scheme" "init=gpt2"
check "and shows no σ_qk" absent "σ_qk="
quits "gpt2 session"

# The save prompt says why a space is refused, inside the prompt; the picker shows why a
# preset is refused, in full, and stays open.
mkdir -p "$TMP/config/attnscope/presets"
printf '# broken on purpose\ntokens = 64\nwidth = sixty-four\n' \
    >"$TMP/config/attnscope/presets/zz-a-preset-with-a-rather-long-name-that-is-broken.preset"
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 XDG_CONFIG_HOME='$TMP/config' '$BIN' -T 32 -d 32 -L 2"
expect "the prompt session computes" "computed in [0-9]+ ms"
press "p opens the name prompt" "name: _" p
keys m y
press "a space is refused, and the prompt says why" "Space refused: a preset's name is its file name" Space
expect "in full" "unquoted: letters, digits, '-', '_' and '.'"
expect "the name so far stays" "name: my_"
press "Esc cancels" "not saved" Escape
press "P opens the picker" "presets \([0-9]+\): " P
press "End selects the broken preset" "> zz-a-preset-with" End
press "Enter: refused, the reason in the picker" "sixty-four" Enter
# The picker's right column (where the header "broken on purpose" starts), its lines joined:
# the path and the line number are there whole, not cut at the column's edge.
right_column() {
    screen | python3 -c '
import sys
lines = sys.stdin.read().split("\n")
col = next(l.index("broken on purpose") for l in lines if "broken on purpose" in l)
print("".join(l[col:].rstrip(" \u2502") for l in lines))'
}
check "the reason names the file and the line, in full" bash -c \
    "$(declare -f screen tm right_column); SOCKET='$SOCKET'; right_column | grep -qF 'zz-a-preset-with-a-rather-long-name-that-is-broken.preset:3:'"
expect "and ends in full" "1\.\.4096"
expect "and the picker stays open" "presets \([0-9]+\): "
expect "the settings stay" "T=32 +d=32"
keys Escape
check "Esc closes the picker" wait_gone "presets \([0-9]+\): "
quits "prompt session"

run 80 24 -T 64 -d 64 -L 8
expect "80×24 computes" "computed in [0-9]+ ms"
expect "? help ends the message line at 80 columns" "\? help(  q quit)?$"
press "a long note does not push it off" "layer 1 is the first.*\? help(  q quit)?$" "["
quits "fourth session"
finish
