#!/bin/bash
# The conditioning view's long-job question at a size that itself fits within 5 min: T up from
# the default screen asks about T = 512, d = 512, which batch prices below 5 min at the same
# pinned rates (an independent pricing path); the question named that very size as "the size
# that fits", reading as a smaller one.  It names no size now.  Esc then keeps the shown result,
# and the status line, after "computed in N ms", said "nothing computed"; it now says the
# previous settings and their result are kept, no new job.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

export ATTNSCOPE_GFLOPS=10
refusal=$("$BIN" --batch --conditioning -T 512 -d 512 --max-time 1 2>&1 >/dev/null)
seconds=$(sed -nE 's/.* is estimated at .* \(([0-9.e+]+) s\), above 1 s.*/\1/p' <<<"$refusal")
below_five_minutes() { awk -v s="$seconds" 'BEGIN { exit !(s != "" && s + 0 <= 300) }'; }
check "batch prices T = 512, d = 512 within 5 min at 10 GFLOP/s (${seconds} s)" below_five_minutes

box_text() { screen | sed -nE 's/^ *│ (.*[^ ]) *│.*$/\1/p' | tr '\n' ' ' | tr -s ' '; }
trace=$TMP/asked.trace
start 100 30 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --trace '$trace'"
expect "the default screen" "^T=256 +d=256"
keys V
final_screen "$TMP/v.txt" "κ" || cat "$TMP/v.txt.why"
check "V: the conditioning view computed" test -s "$TMP/v.txt"
press "T: T = 512 is asked about" "a long computation" T
expect "  the question names the asked size" "to compute T=512 d=512 L=8"
check "  and names no size as the one that fits (the asked one does)" \
    eval '! box_text | grep -q "the conditioning fits at"'
check "  and no conditioning started" bash -c "! grep -q 'job-start gen=3 ' '$trace'"
press "Esc keeps the shown result" "kept the previous settings and their result: no new job" Escape
check "  the status line does not say nothing was computed beside 'computed in'" \
    eval '! screen | grep -qE "computed in [0-9]+ ms.*nothing computed"'
quits "q quits"
finish
