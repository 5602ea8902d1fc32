#!/bin/bash
# The conditioning view's long-job question names the size that fits within 5 min (issue 25):
# at an engineer's size (T = 512, d = 2048, L = 24, 16 heads, MLP) V asks at once, computing no
# conditioning, and the size it names is the one `--batch --conditioning --max-time 300` names
# for the same settings (main.c's own pricing: an independent path to the shared search).
# Where no size from T = d = 8 up fits, the question says so, and batch agrees that T = d = 8
# is priced above 5 min.  The rates are pinned (ATTNSCOPE_GFLOPS), so the machine's load
# decides nothing; at 80 columns the sentence is wrapped, whole.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

engineer=(-T 512 -d 2048 -L 24 --heads 16 --mlp gelu)

# The T and d batch names, refusing the engineer's size above --max-time 300 (exit 2), and the
# estimate it quotes: in days, as the screen must quote it too.
refusal=$(ATTNSCOPE_GFLOPS=10 "$BIN" --batch --conditioning "${engineer[@]}" --max-time 300 2>&1 >/dev/null)
read -r batch_t batch_d <<<"$(sed -nE 's/.*within 5 min the conditioning fits at T = ([0-9]+), d = ([0-9]+) .*/\1 \2/p' <<<"$refusal")"
check "batch names a size within 5 min for the engineer's size (T=$batch_t, d=$batch_d)" \
    test -n "$batch_t" -a -n "$batch_d"
batch_days=$(sed -nE 's/.* is estimated at ([0-9.]+ days) \(.*/\1/p' <<<"$refusal")
check "batch estimates the engineer's size in days ($batch_days)" test -n "$batch_days"

# The rows of the question's box, their borders taken off and joined: a sentence wrapped over
# two rows reads as one.
box_text() { screen | sed -nE 's/^ *│ (.*[^ ]) *│.*$/\1/p' | tr '\n' ' ' | tr -s ' '; }
named_size() { box_text | sed -nE 's/.*within 5 min the conditioning fits at T = ([0-9]+), d = ([0-9]+) \(depth, heads and the rest kept\).*/\1 \2/p'; }

trace=$TMP/fit.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 '$BIN' ${engineer[*]} --trace '$trace'"
expect "the start-up job of minutes is asked about first" "a long computation"
keys Enter
check "  Enter: the question is gone" wait_gone "a long computation"
expect "the screen starts at the engineer's size" "^T=512 +d=2048 +L=24"
check "no size is named before the key" absent "the conditioning fits at"
press "V: the conditioning view's job is asked about at once" "a long computation" V
expect "  with its estimate in days, as batch says it" "about ${batch_days//./\\.} to compute T=512 d=2048 L=24 seeds=1\. Compute it\?"
read -r screen_t screen_d <<<"$(named_size)"
same_size() {
    [ -n "$screen_t" ] && [ "$screen_t" = "$batch_t" ] && [ "$screen_d" = "$batch_d" ] ||
        { echo "  the screen names T=$screen_t d=$screen_d, batch T=$batch_t d=$batch_d"; box_text; return 1; }
}
check "  naming, whole at 80 columns, the size batch names within 5 min" same_size
check "  the hint follows the sentence" eval 'screen | grep -q "Enter computes it; Esc keeps the previous settings"'
check "  the trace has the question" grep -q "confirm-ask seconds=" "$trace"
check "  and no conditioning started" bash -c "! grep -qE 'conditioning-start|job-start gen=2 ' '$trace'"
press "Esc keeps the previous view, nothing computed" "kept the previous settings and their result: no new job" Escape
check "  the sentence is gone with the question" wait_gone "the conditioning fits at"
quits "q quits"

# Where even T = d = 8 is priced above 5 min (a machine of 1e-4 GFLOP/s), the question says no
# size fits, and batch prices T = d = 8 above 5 min too.
batch_t8_refused() {
    ATTNSCOPE_GFLOPS=1e-4 "$BIN" --batch --conditioning -T 8 -d 8 -L 24 --max-time 300 >/dev/null 2>&1
    [ $? -eq 2 ]
}
check "batch refuses T = d = 8, L = 24 above 5 min at 1e-4 GFLOP/s" batch_t8_refused
trace=$TMP/nofit.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=1e-4 '$BIN' -T 16 -d 16 -L 24 --trace '$trace'"
expect "the start-up job, priced long at 1e-4 GFLOP/s, is asked about first" "a long computation"
keys Enter
check "the first job is done" wait_trace "job-done gen=1 "
press "V: asked about the conditioning" "a long computation" V
no_size_fits() {
    box_text | grep -qF "within 5 min the conditioning fits at no size from T = d = 8 up (depth, heads and the rest kept)" ||
        { box_text; return 1; }
}
check "  saying that no size from T = d = 8 up fits within 5 min" no_size_fits
check "  and no conditioning started" bash -c "! grep -q 'conditioning-start' '$trace'"
press "Esc keeps the previous view" "kept the previous settings and their result: no new job" Escape
quits "q quits"

# Outside the conditioning view the question names no size (E doubles the seeds, a job of the
# stable-rank view, priced long at 1e-4 GFLOP/s).
trace=$TMP/seeds.trace
start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=1e-4 '$BIN' -T 32 -d 32 -L 8 --seeds 2 --trace '$trace'"
expect "the start-up job, priced long at 1e-4 GFLOP/s, is asked about first" "a long computation"
keys Enter
check "the first job is done" wait_trace "job-done gen=1 "
press "E: asked about 4 seeds" "a long computation" E
check "  naming no size: the stable-rank view computes no conditioning" absent "the conditioning fits"
press "Esc keeps 2 seeds" "kept the previous settings and their result: no new job" Escape
quits "q quits"
finish
