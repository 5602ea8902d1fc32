#!/bin/bash
# A LAPACK helper killed from outside (issue 26: 12) is noticed by the screen: the next job
# reaps it (no zombie), starts a fresh one and says so in its warnings and its trace, and
# that job's long calls run in the new helper's workers, so a stop stays fast.  Read from
# --trace and /proc, never from timing.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/isolation.trace
# exec: the pane's process is the program itself, whose one child is the helper.
start 120 40 "exec env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -a markov -T 640 -d 640 -L 2 --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
program=$(pid_of_screen)
helper=$(children "$program")
check "the screen has its helper" test -n "$helper"
kill -KILL "$helper"
is_zombie() { [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = Z ]; } # pid
# pid: until it is a zombie (it dies at once; nothing reaps it before a job ends)
zombie() { poll_until "$TIMEOUT" 0.05 is_zombie "$1"; }
check "the killed helper is a zombie until the screen notices" zombie "$helper"
keys r
check "the next job notices: restarted, named in the trace" \
    wait_trace "isolation the LAPACK helper process $helper ended \(killed by signal 9\): restarted as [0-9]+"
check "the next job is done" wait_trace "job-done gen=2 "
check "the old helper is reaped: no zombie" bash -c "! test -e /proc/$helper"
new=$(grep -oE "restarted as [0-9]+" "$trace" | head -n 1 | grep -oE "[0-9]+$")
check "the new helper is the screen's child" bash -c "ps -o ppid= -p '$new' | grep -qw '$program'"
expect "the job's warnings say it" "LAPACK helper process $helper ended"
keys q
check "the new helper ends with the screen" wait_process_gone "$new"
finish
