#!/bin/bash
# Before a job the cost model puts above 30 s, from a key or a preset, the screen asks:
# Esc keeps the previous settings and starts no job (the trace's job-start events), Enter
# puts the new settings on and starts it, a setting or view key changes what is asked about and
# prices them again (back at the settings on, nothing is asked).  The estimates are far above 30 s on any machine
# (minutes at the calibrated rate), so no timing decides the outcome.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/confirm.trace
jobs() { grep -c 'job-start' "$trace" 2>/dev/null; }
jobs_above() { [ "$(jobs)" -gt "$1" ]; } # n
# Polls the trace until it has more than n job-start events.
wait_jobs_above() { poll_until "$TIMEOUT" 0.1 jobs_above "$1"; } # n
# After an answer, gives a wrongly started job time to show in the trace, then compares.
no_new_job() { # n
    sleep 1
    [ "$(jobs)" -eq "$1" ]
}

# The tour's one step: a preset whose job takes hours.
mkdir -p "$TMP/tour"
printf '# Tour 1/1: a preset too big to start unasked\ntokens = 2048\nwidth = 2048\ndepth = 256\nseeds = 64\n' \
    >"$TMP/tour/01-big.preset"

# 256 layers, 16 seeds at T = d = 256: E doubles the seeds to a job of minutes at the rate
# ATTNSCOPE_GFLOPS pins (a machine of 10 GFLOP/s per core), asked on a fast machine as on a
# busy one.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 ATTNSCOPE_TOUR='$TMP/tour' '$BIN' -T 256 -d 256 -L 256 --seeds 16 --trace '$trace'"
expect "the start-up job of minutes is asked about too (start-confirm.sh)" "a long computation"
keys Enter
expect "the screen starts with 16 seeds" "seeds=16"
expect "the status line shows the time left" "computing [0-9]+%, (<1 s|~[0-9.]+ (s|min|h)) left"
check "the first job started" wait_jobs_above 0
before=$(jobs)
# Progress moves while the job runs, also between two finished layers (it follows the clock
# at the estimated pace): a later reading is higher (polled: a busy machine is slower, and
# liveness, not speed, is what is checked).
percent() { screen | grep -oE 'computing [0-9]+%' | grep -oE '[0-9]+'; }
progress_rises() {
    local first second deadline=$((SECONDS + TIMEOUT))
    first=$(percent)
    [ -n "$first" ] || return 1
    while [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.5
        second=$(percent)
        [ -n "$second" ] && [ "$second" -gt "$first" ] && return 0
    done
    return 1
}
check "progress rises while the job runs" progress_rises

press "E: the screen asks before the long job" "a long computation" E
expect "the question says how long and for what, once approximate (about, no ~)" "about [0-9.]+ (s|min|h) to compute T=256 d=256 L=256 seeds=32"
expect "the question says what Enter and Esc do" "Enter computes it; Esc keeps the previous settings"
check "the trace records the question" grep -q 'confirm-ask seconds=' "$trace"
press "another key leaves the question open, saying how to answer" \
    "answer with Enter \(compute\) or Esc \(keep\)" x
check "the question is still there" eval 'screen | grep -q "a long computation"'
press "Esc: the previous settings are kept" "kept the previous settings and their result: no new job" Escape
check "Esc: the question is gone" wait_gone "a long computation"
check "Esc: the status line still shows 16 seeds" eval 'screen | grep -q "seeds=16"'
check "Esc: no job started" no_new_job "$before"

# A setting key while the question is open changes the settings asked about and prices them
# again (no timing decides: 64 seeds cost more than 32, and 16 are the settings on).
asks() { grep -c 'confirm-ask' "$trace"; }
press "E: asked about 32 seeds" "a long computation" E
asked=$(asks)
press "E while it is open: asked again, about 64 seeds" "to compute T=256 d=256 L=256 seeds=64" E
check "  priced again: the trace has one more question" eval '[ "$(asks)" -eq $((asked + 1)) ]'
check "  the status line still shows 16 seeds" eval 'screen | grep -qE "^T=256 .*seeds=16"'
press "e: back to 32 seeds, still asked" "to compute T=256 d=256 L=256 seeds=32" e
press "e again: the settings on, so nothing is asked or computed" \
    "back to the settings on: nothing to compute" e
check "  the question is gone" wait_gone "a long computation"
check "  still 16 seeds" eval 'screen | grep -qE "^T=256 .*seeds=16"'
check "  no job started" no_new_job "$before"

press "E again: the question again" "a long computation" E
press "Enter: the new settings are on (the status line, not the question)" "^T=256 .*seeds=32" Enter
check "Enter: the job started" wait_jobs_above "$before"
check "the trace records the answer before the job" \
    eval 'grep -E "confirm-go|job-start" "$trace" | tail -n 2 | head -n 1 | grep -q confirm-go'

# A preset (the tour's step) that would take hours: asked too.
before=$(jobs)
press "> loads a long preset: the screen asks" "to compute T=2048 d=2048 L=256 seeds=64" ">"
press "Esc keeps T = 256" "kept the previous settings" Escape
check "Esc: still T = 256" eval 'screen | grep -qE "^T=256 +d=256"'
check "Esc: no job started for the preset" no_new_job "$before"
press "> again: asked again" "to compute T=2048 d=2048 L=256 seeds=64" ">"
press "Enter loads the preset" "^T=2048 +d=2048 +L=256" Enter
expect "the tour step's title is the note" "a preset too big to start unasked"
check "Enter: the preset's job started" wait_jobs_above "$before"
check "the job is the preset's" eval 'grep "job-start" "$trace" | tail -n 1 | grep -q "T=2048 d=2048 L=256"'

quits "q quits during the long job"

# The conditioning view at T = d = 256 and 32 layers is a long job (the default's 8 are not:
# its lower bound on kappa(K) is priced at ~13 s here): V asks about it, and V again, to the
# attention map the last job covers, closes the question with no job (a view key steps what is
# asked about, as a setting key does).
trace=$TMP/view.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=10 '$BIN' -T 256 -d 256 -L 32 --trace '$trace'"
expect "T = d = 256, L = 32 computes" "computed in [0-9]+ ms"
before=$(jobs)
press "V: the conditioning view's job is asked about" "a long computation" V
press "V again: the attention map, the question gone" "attention map A \(as built\)" V
question_gone() { ! screen | grep -q "a long computation"; }
check "V again: no question left on the screen" question_gone
check "V again: no job started" no_new_job "$before"
quits "q quits in the attention map"

# q quits while the question is open, as the status line under it offers (T = d = 64, L = 4:
# no warning takes q's place there; at the rate pinned to 0.01 GFLOP/s T = 128 is minutes).
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_GFLOPS=0.01 '$BIN' -T 64 -d 64 -L 4"
expect "T = d = 64, L = 4 computes" "computed in [0-9]+ ms"
press "T: the question" "a long computation" T
check "  the status line under it offers q" eval 'screen | grep -q "q quit"'
quits "q quits while the question is open"

# --no-confirm: the same key starts its job at once.
trace=$TMP/no-confirm.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 256 --seeds 16 --no-confirm --trace '$trace'"
expect "--no-confirm: the screen starts" "seeds=16"
check "--no-confirm: the first job started" wait_jobs_above 0
before=$(jobs)
press "--no-confirm: E puts 32 seeds on at once" "seeds=32" E
check "--no-confirm: its job started" wait_jobs_above "$before"
asked_nothing() { ! grep -q confirm-ask "$trace" && ! screen | grep -q "a long computation"; }
check "--no-confirm: nothing was asked" asked_nothing
quits "q quits"
finish
