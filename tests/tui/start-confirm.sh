#!/bin/bash
# The command line's job is asked about as a key's is: above 30 s the screen starts with the
# question and no job (the trace's job-start events); Esc computes nothing and says how to go
# on, a smaller size from a key then computes, and the original size asked again computes on
# Enter; --no-confirm starts it unasked.  T = d = 4096, 256 layers take hours at any rate
# ATTNSCOPE_GFLOPS may pin, so no timing decides the outcome.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/start.trace
jobs() { # the job-start events in the trace (0 before it exists)
    local n
    n=$(grep -c 'job-start' "$trace" 2>/dev/null)
    echo "${n:-0}"
}
no_job() { sleep 1; [ "$(jobs)" -eq 0 ]; }

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 '$BIN' -T 4096 -d 4096 -L 256 --trace '$trace'"
expect "the start-up job above 30 s: the question, before anything is computed" "a long computation"
expect "it names the command line's size" "to compute T=4096 d=4096 L=256 seeds=1"
expect "it says what Esc does before any result" "Esc computes nothing"
check "no job started while it asks" no_job
panels_say_the_question_decides() {
    shows 'nothing computed yet: the question below decides' && absent 'computing…'
}
check "the panels say the question decides, not computing" panels_say_the_question_decides
press "Esc: nothing computed, saying how to go on" "nothing computed: change the settings with keys" Escape
check "Esc: no job started" no_job
# The panels too (the note is one line; each panel says it again): no "computing…".
panels_say_nothing_computed() {
    absent 'computing…' && absent 'the question below decides' &&
        [ "$(screen | grep -c 'nothing computed: change the settings')" -ge 3 ]
}
check "Esc: the panels say nothing is computed and how to go on, not computing" \
    poll_until "$TIMEOUT" 0.1 panels_say_nothing_computed
press "t (T halved): asked again, still long, about T=2048" "to compute T=2048 d=4096 L=256" t
keys Escape
quits "q quits after the question"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 '$BIN' -T 4096 -d 4096 -L 256 --trace '$trace.enter'"
expect "asked again at start" "a long computation"
keys Enter
check "Enter: the start-up job starts" poll_until "$TIMEOUT" 0.1 grep -qs 'job-start' "$trace.enter"
quits "q quits while it computes"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 '$BIN' -T 4096 -d 4096 -L 256 --no-confirm --trace '$trace.no'"
check "--no-confirm: the start-up job starts unasked" poll_until "$TIMEOUT" 0.1 grep -qs 'job-start' "$trace.no"
check "--no-confirm: no question" absent "a long computation"
quits "q quits"
finish
