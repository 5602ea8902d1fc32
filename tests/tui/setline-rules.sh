#!/bin/bash
# The : line keeps the rules the command line and the keys keep: a V not above every fixed
# token id is refused in --batch's words, and a setting the line leaves without effect is
# said, as its key says it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

seq 0 3 45 >"$TMP/ids.txt"
refusal=$("$BIN" --batch -T 16 -d 16 -L 1 --token-ids "$TMP/ids.txt" --vocab 10 2>&1 >/dev/null |
    sed 's/^attnscope: --token-ids: //')
check "the command line refuses --vocab 10 under ids up to 45" test -n "$refusal"
start 160 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 1 --token-ids '$TMP/ids.txt' 2>/dev/null"
expect "computes" "computed in [0-9]+ ms"
keys ":"
keys -l "vocab 10"
# The path and the words after "V = 10" may wrap in the box: the id, its line and V are the rule.
check "... naming the id's line" test "${refusal#*ids.txt:5: token id 12 is not below V = 10 (}" != "$refusal"
press ":vocab 10 is refused in the command line's words" \
    "nothing set: .*ids\.txt:5: token id 12 is not below V = 10 \(" Enter
keys Escape
keys ":"
keys -l "vocab 46"
press ":vocab 46, above every id, is set" "set vocab=46" Enter
quits "q quits"

start 160 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 1 --sink 5 2>/dev/null"
expect "computes" "computed in [0-9]+ ms"
keys ":"
keys -l "attention markov"
press ":attention markov says the sink it leaves without effect" \
    "set attention=markov; sink now has no effect" Enter
quits "q quits"

# A T across --hf-config's sliding window (2047 keys, read at T = 64) is refused, by the line
# and by the key, with the command line's reason; the mask the file set stays.
hf="-T 64 --hf-config tests/data/hf-config/phi-3-mini-4k.json -d 64 --heads 2 --head-dim 32 --kv-heads 2 -L 1 --input embedding"
# shellcheck disable=SC2086
check "the command line refuses -T 2100 after it" \
    bash -c "'$BIN' --batch $hf -T 2100 2>&1 >/dev/null | grep -q 'sliding window of 2047 keys'"
start 200 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $hf --no-confirm 2>/dev/null"
expect "computes" "computed in [0-9]+ ms"
keys ":"
keys -l "T 2100"
press ":T 2100 is refused with the command line's reason" \
    "nothing set: -T/--tokens 2100 after --hf-config" Enter
keys Escape
check "T stays at 64" shows "T=64 "
quits "q quits"
finish
