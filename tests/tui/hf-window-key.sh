#!/bin/bash
# The T key refuses a T across --hf-config's sliding window, as the : line does (both through
# the screen's one check of new settings): the file's window of 48 keys covers every token at
# T = 32, where it was read, and would act at T = 64, where T steps; the refusal is the command
# line's, the note says it, T stays and nothing is computed.  t, to 16 (the window still covers
# every token), is taken: the refusal is the window's, not the key's.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

config=$TMP/config.json
/usr/bin/python3 - tests/data/hf-config/phi-3-mini-4k.json "$config" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["sliding_window"] = 48
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
hf="-T 32 --hf-config $config -d 64 --heads 2 --head-dim 32 --kv-heads 2 -L 1 --input embedding"
# shellcheck disable=SC2086
check "the command line refuses -T 64 after it" \
    bash -c "'$BIN' --batch $hf -T 64 2>&1 >/dev/null | grep -q 'sliding window of 48 keys acts at T = 64'"

trace=$TMP/hf-window.trace
jobs_started() { grep -c " job-start " "$trace"; }
start 200 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $hf --no-confirm --trace '$trace' 2>/dev/null"
expect "computes" "computed in [0-9]+ ms"
check "  and settles" settled
check "the status line shows T=32" shows "T=32 "
jobs=$(jobs_started)
press "T is refused with the command line's reason" \
    "nothing set: -T/--tokens 64 after --hf-config .*config\.json: its sliding window of 48 keys" T
check "T stays at 32" shows "T=32 "
check "  and T=64 is nowhere on the screen" absent "T=64 "
check "no job was started for it" test "$(jobs_started)" = "$jobs"
press "t, to 16 inside the window, is taken" "T=16 " t
check "  and computed" settled
check "  a job was started for it" test "$(jobs_started)" -gt "$jobs"
quits "q quits"
finish
