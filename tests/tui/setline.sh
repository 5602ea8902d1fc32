#!/bin/bash
# The : line sets a setting that has no key by its name: Tab completes the name and shows what
# it accepts, Enter sets it and the next result is --batch's with the same settings (its CSV
# files, settings line and numbers, byte for byte), what it changes is computed as a key's
# change is (a shown layer from the kept networks), a refusal says the command line's words and
# sets nothing, ↑/↓ recall the lines entered (a refused one too), Esc cancels, an option that is
# not a setting is refused with the reason, T follows a width the line sets as it follows d,
# and q quits.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

ARGS="-T 32 -d 64 -L 2 --wo gaussian"
trace=$TMP/setline.trace
mkdir -p "$TMP/out"
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $ARGS --no-confirm --trace '$trace'"
expect "computes" "computed in [0-9]+ ms"
press ": opens the line" "set: a setting and its value" ":"
keys -l "head-d"
press "Tab completes the name" ":head-dim _" Tab
expect "and says what it accepts and holds" "accepted 0\.\.d; now 0"
keys -l "32"
press "Enter sets it, the status line says so" "set head-dim=32" Enter
expect "the status line shows the new setting" "d_h=32"
check "the new result is in" settled
press "x asks for a directory" "directory: _" x
keys -l "$TMP/out/screen"
press "and exports the result" "exported [0-9]+ files to" Enter
"$BIN" --batch $ARGS --head-dim 32 --export "$TMP/batch" >/dev/null 2>&1
"$BIN" --batch $ARGS --export "$TMP/before" >/dev/null 2>&1
same_csv() { # every CSV file of the two exports the same, byte for byte
    local f
    for f in layers eigenvalues singular_values; do
        cmp "$1/$f.csv" "$2/$f.csv" || return 1
    done
}
check "its numbers and settings are --batch --head-dim 32's (every CSV byte for byte)" \
    same_csv "$TMP/batch" "$TMP/out/screen"
check "which are not those before the line (the comparison can fail)" \
    bash -c "! cmp -s '$TMP/before/layers.csv' '$TMP/out/screen/layers.csv'"

# What the line changes is computed as a key's change is: the kept networks serve a new shown
# layer (no layer computed again, as ] does), a new seed computes them anew.
last_job() { sed -nE 's/.* job-start gen=([0-9]+) .*/\1/p' "$trace" | tail -n 1; }
layers_run() { grep -c " layer gen=$1 " "$trace"; }
keys ":"
keys -l "layer 2"
press ":layer 2 sets the shown layer" "set layer=2" Enter
check "its result is in" settled
check "and no layer was computed again for it" test "$(layers_run "$(last_job)")" = 0
keys ":"
keys -l "seed 2"
press ":seed 2 sets the seed" "set seed=2" Enter
check "its result is in" settled
check "and both layers were computed for it" test "$(layers_run "$(last_job)")" -ge 2

refusal=$("$BIN" --batch $ARGS --head-dim 32 --seed 2 --layer 2 --heads 0 2>&1 >/dev/null | sed 's/^attnscope: //')
check "the command line refuses --heads 0" test -n "$refusal"
keys ":"
keys -l "heads 0"
press "a refusal says the command line's words" "$(printf '%s' "${refusal:0:40}" | sed 's/[][().*^$|+?{}\\]/\\&/g')" Enter
expect "and keeps the line open to change it" ":heads 0_"
press "Esc cancels: nothing set" "nothing set" Escape
check "the settings stay" shows "d_h=32"

keys ":"
keys -l "rope-"
press "Tab on several matches: the first, counted" ":rope-theta_" Tab
expect "its count" "1 of 8 \(Tab: next\)"
press "Tab again: the next match" ":rope-local-base-freq_" Tab
keys Escape
keys ":"
press "↑ recalls the line entered last, refused as it was (to fix it)" ":heads 0_" Up
press "↑ again, the one set before it" ":seed 2_" Up
press "↑ again, the one before it" ":layer 2_" Up
press "↓ back to the later one" ":seed 2_" Down
keys Escape
keys ":"
keys -l "weights x.safetensors"
press "an option that is not a setting: refused with the reason" "--weights is not set on the screen: a checkpoint is read at start only" Enter
keys Escape
keys ":"
keys -l "width 16"
press "what the line does not name follows, as under a key: T down with d" "set width=16; tokens T lowered to 16 with d" Enter
expect "the status line shows both" "T=16 +d=16"
quits "q quits"
finish
