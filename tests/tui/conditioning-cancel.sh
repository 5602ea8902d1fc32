#!/bin/bash
# Cancelling the conditioning view's job, read from --trace (issue 14).  A key while the
# worker estimates κ by Lanczos (T = d = 256: each layer takes seconds) or while one of the
# exact path's SVDs of K runs (T·d = 1536: a 1536 × 1536 dgesdd, ~0.6 s, which nothing can
# interrupt from inside; the path pinned by --conditioning-path exact) starts the next job
# within a generous bound, the superseded
# conditioning never finishes, the killed SVD's process is gone, and the new settings'
# conditioning then completes and is drawn.  The status line shows the progress with the
# time left meanwhile, and a conditioning priced above 30 s asks first.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Seconds from the key to the next job's start (measured: well below 0.1 s).
BOUND=3

within_bound() { # key-event next-event
    local key next
    key=$(event_ms "$1")
    next=$(event_ms "$2")
    echo "# $1 -> $2: $(awk -v a="$key" -v b="$next" 'BEGIN { printf "%.1f", b - a }') ms"
    awk -v a="$key" -v b="$next" -v bound="$BOUND" 'BEGIN { exit !(a != "" && b != "" && b - a <= 1000 * bound) }'
}
# --- Lanczos: a key between the steps -------------------------------------------------------
trace=$TMP/lanczos.trace
# --no-confirm: on a busy machine the cost model may price this above 30 s and ask first.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 2 --no-confirm --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
keys V
check "V: the conditioning starts by Lanczos (T·d = 65536)" \
    wait_trace "conditioning-start gen=2 slot=0 init=normal exact=0"
expect "the status line shows its progress and the time left" "computing [0-9]+%, ~?[<0-9]+ s left"
check "a layer of it is done" wait_trace "conditioning-layer gen=2 network=0 layer=1/2"
keys r
expect "r: the new seed is shown at once" "seed=2"
check "the next job starts" wait_trace "job-start gen=3 "
check "within $BOUND s of the key" within_bound "key r gen=3" "job-start gen=3 "
check "the superseded conditioning stopped" wait_trace "extra-cancel gen=2 conditioning"
check "the new seed's conditioning is done" wait_trace "conditioning-done gen=3 slot=0"
expect "and drawn, saying it is estimated (with its error bound, or that no layer is certified)" "κ\(K\) estimated: Lanczos, (s_min ± [0-9.e+-]+ relative|certified at no layer)"
check "the superseded conditioning never finished" bash -c "! grep -q 'conditioning-done gen=2 ' '$trace'"
quits "q quits"

# --- the long-job question: the default size's conditioning is priced above 30 s ----------
# at the rate ATTNSCOPE_GFLOPS pins (1 GFLOP/s: minutes to hours), on a fast machine as on a busy one.
trace=$TMP/question.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=1 '$BIN' --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
press "V at T = d = 256, L = 8: the cost model asks first" "about [0-9.]+ (min|h) to compute T=256 d=256 L=8" V
check "nothing started before the answer" bash -c "! grep -q 'conditioning-start' '$trace'"
press "Esc keeps the previous view, nothing computed" "kept the previous settings and their result: no new job" Escape
check "the main panel is still the stable rank" bash -c "tmux -L '$SOCKET' capture-pane -p | grep -q 'stable rank sr(Σℓ) against depth'"
quits "q quits"

# Cutting-skip's conditioning is priced to seek s_min at every layer, a ceiling (it took 60 s
# where "about 7 min" was asked): the question says "at most".
trace=$TMP/ceiling.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=1 '$BIN' --init cutting-skip --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
press "V with cutting-skip: the question names its price as a ceiling" "at most [0-9.]+ (min|h) to compute T=256 d=256 L=8" V
press "Esc keeps the previous view, nothing computed" "kept the previous settings and their result: no new job" Escape
quits "q quits"

# --- the exact path: a key inside an SVD of K -------------------------------------------
trace=$TMP/exact.trace
start 120 40 "exec env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --init cutting-skip -n rms -T 24 -d 64 -L 2 --no-confirm --conditioning-path exact --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
program=$(pid_of_screen)
helper=$(children "$program")
check "the screen has its helper process" test -n "$helper"
keys V
check "V: the exact path (T·d = 1536)" wait_trace "conditioning-start gen=2 slot=0 init=cutting-skip exact=1"
# A worker of the helper with 0.3 s of CPU runs an SVD of K (the other isolated calls at
# this size take milliseconds).
long_call=$(worker_past_cpu "$helper" 0.3)
check "an SVD of K runs in a worker process" test -n "$long_call"
keys r
check "the next job starts" wait_trace "job-start gen=3 "
check "within $BOUND s of the key" within_bound "key r gen=3" "job-start gen=3 "
check "the SVD's process is gone" wait_process_gone "$long_call"
check "the superseded conditioning never finished" bash -c "! grep -q 'conditioning-done gen=2 ' '$trace'"
check "the new seed's conditioning is done" wait_trace "conditioning-done gen=3 slot=0"
expect "and drawn as exact" "κ\(K\) exact \(SVD of K, 1536×1536\)"
keys q
check "q quits" wait_process_gone "$program"
finish
