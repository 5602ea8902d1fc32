#!/bin/bash
# Cancelling, read from --trace.  A T = d = 2048 job superseded by a key while one of its
# LAPACK calls runs (the shown layer's dgeev, ~7 s on one core here, which nothing can
# interrupt from inside) gives way at once: the call's process is killed, the next job's
# job-start follows the key within a generous bound, and the killed process is gone.
# Without that, the call would run to its end first.  Then the keys that need no forward
# pass run none: ] computes only the new shown layer's spectra (no `layer` event between the
# key and its job-done), and L computes exactly one more layer.
# --no-confirm: r's job is priced near the long-job question's 30 s here (~26 s on a quiet
# machine), above it on a busy one, where the screen would ask instead of starting it; which
# way the key goes must not depend on the machine's load.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Seconds from the key to the next job's start.  Measured: ~0.05 s; the call it cuts short
# (dgeev at T = 2048: ~7 s of CPU here) would run for 5 s more at least.
BOUND=3

# --- a key during a long LAPACK call -----------------------------------------------------
trace=$TMP/cancel.trace
# exec: the pane's process is the program itself, whose one child is the helper.
start 120 40 "exec env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -a markov -T 2048 -d 2048 -L 2 --no-confirm --trace '$trace'"
expect "T=2048: the job runs" "computing [0-9]+%"
program=$(pid_of_screen)
helper=""
helper_found() { helper=$(children "$program") && [ -n "$helper" ]; }
check "the screen has its helper process" poll_until "$TIMEOUT" 0.1 helper_found

# A worker of the helper that has used 1.5 s of CPU runs one of the shown layer's spectra:
# the other isolated calls at this size, the Gram matrices, need ~0.25 s each.
long_call=$(worker_past_cpu "$helper" 1.5)
check "a long call runs in a worker process" test -n "$long_call"
keys r
expect "r: the new seed is shown at once" "seed=2"
check "the next job starts" wait_trace "job-start gen=2"
check "no question asked (--no-confirm)" bash -c "! grep -q 'confirm-ask' '$trace'"
key=$(event_ms "key r gen=2")
next=$(event_ms "job-start gen=2")
echo "# key -> next job-start: $(awk -v a="$key" -v b="$next" 'BEGIN { printf "%.1f", b - a }') ms"
check "the next job started within $BOUND s of the key" \
    awk -v a="$key" -v b="$next" -v bound="$BOUND" 'BEGIN { exit !(b != "" && b - a <= 1000 * bound) }'
check "the superseded job did not finish" bash -c "! grep -q 'job-done gen=1 ' '$trace'"
check "its call's process is gone" bash -c "! kill -0 '$long_call' 2>/dev/null"
keys q
check "q quits" wait_gone "seed=2"
check "the helper ends with the screen" wait_process_gone "$helper"

# --- keys that need no forward pass --------------------------------------------------------
trace=$TMP/reuse.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 4 --no-confirm --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
press "]: layer 2 is shown" "layer=2/4" "]"
check "]: its job is done" wait_trace "job-done gen=2 "
check "]: its spectra were shown" wait_trace "frame gen=2 shown=2 spectra=1"
check "]: no layer computed between the key and its result" \
    awk '/ key \] gen=2/ { on = 1 } on && / layer gen=/ { bad = 1 } / job-done gen=2 / { exit bad } END { exit bad }' "$trace"
press "L: one more layer" "L=5" L
check "L: its job is done" wait_trace "job-done gen=3 "
check "L: exactly one layer computed, the fifth" \
    awk '/ layer gen=3 / { n++ } END { exit !(n == 1) }' "$trace"
check "L: the layer is the fifth" grep -q "layer gen=3 seed=1 layer=5/5" "$trace"
keys q
check "q quits" wait_gone "L=5"
finish
