#!/bin/bash
# Esc cancels the running job: it stops (no job-done in the --trace), and the screen returns
# to the settings of the shown result, as Esc at the long-job question keeps the previous
# settings; the status line says it was cancelled.  Cancelling the first job leaves nothing
# computed, and says so; with no job running Esc says it has nothing to cancel.  The jobs at
# T = d = 2048 run for many seconds here, so each Esc meets its job running.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/esc.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 3 --no-confirm --trace '$trace'"
expect "the first job is done" "computed in [0-9]+ ms"
press "Esc with no job running says there is nothing to cancel" "none runs" Escape
keys T T T
expect "T T T: T=2048 is computing" "T=2048 +d=2048.*|computing"
check "its job started" wait_trace "job-start gen=4 "
press "Esc: the status line says it was cancelled" \
    "cancelled: back to the settings of the shown result" Escape
expect "... and the settings are the shown result's again" "T=256 +d=256 +L=3"
check "the job was cancelled by the key" wait_trace "job-cancel-key"
check "... and stopped: no more computing on the screen" wait_gone "computing"
check "the worker stopped it" wait_trace "job-cancel gen=4 "
check "the cancelled job never finished" bash -c "! grep -q 'job-done gen=4 ' '$trace'"
press "a key after it computes as before" "seed=2" r
expect "... its result" "computed in [0-9]+ ms"
quits "q quits"

# Esc during the first job: nothing computed, and the status line says what to do.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 2048 -d 2048 -L 3 --no-confirm"
expect "T=2048 at start: computing" "computing"
press "Esc during the first job: cancelled, nothing computed" "cancelled: nothing computed" Escape
check "... and nothing computes" wait_gone "computing"
quits "q quits after it"
finish
