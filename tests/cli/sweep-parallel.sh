#!/bin/bash
# scripts/sweep-parallel.sh runs a grid with GNU parallel on this machine: every job in the
# job log, the records merged equal to the same grid run in one --batch --jsonl process (to
# the last bit), and a resumed run after an interruption computes only the jobs that had not
# ended; a resumed run of a finished sweep computes nothing; failed jobs (lines above their
# max_time) run again with --resume --max-time and merge without their failed records.  Skipped (never passed) without
# GNU parallel.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
if ! parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
    skip_script "scripts/sweep-parallel.sh" "GNU parallel is not installed (scripts/install-deps.sh check installs it)"
fi
sweep() { scripts/sweep-parallel.sh --bin "$BIN" "$@"; }

"$BIN" grid 'T=8,16 gap=off,center seeds=6' -d 16 -L 3 --shards 3 >"$tmp/grid.jsonl"
"$BIN" --batch --jsonl <"$tmp/grid.jsonl" >"$tmp/one-process.jsonl"
check "12 configurations" test "$(wc -l <"$tmp/grid.jsonl")" -eq 12

sweep --jobs 2 --joblog "$tmp/log" "$tmp/grid.jsonl" "$tmp/results.jsonl" 2>"$tmp/err"
check "the sweep: exit 0" test $? -eq 0
check "the job log has 12 jobs, each exit 0" \
    test "$(awk 'NR > 1 && $7 == 0' "$tmp/log" | wc -l)" -eq 12
check "12 records, each named by its job (PARALLEL_SEQ)" test "$("$PY" -c 'import json, sys
print(sorted(int(json.loads(l)["provenance"]["PARALLEL_SEQ"]) for l in open(sys.argv[1])) == list(range(1, 13)))' "$tmp/results.jsonl")" = True
check "merged, the same numbers as one process" cmp -s <(merged_numbers "$tmp/results.jsonl") <(merged_numbers "$tmp/one-process.jsonl")

# A bad line in the second job of three lines: stderr names its line in the grid, not in the
# job's chunk (the record's "line" stays the chunk's, as merge reads it).
bad_line_named() {
    { head -4 "$tmp/grid.jsonl"; echo '{"T": 8, "d": 4}'; } >"$tmp/bad-grid.jsonl"
    sweep --lines 3 --joblog "$tmp/bad.log" "$tmp/bad-grid.jsonl" "$tmp/bad-results.jsonl" 2>"$tmp/bad.err"
    local status=$?
    [ $status -eq 1 ] && grep -qF "attnscope: line 5 of the grid (line 2 of this job's): -T/--tokens 8 exceeds -d/--width 4" "$tmp/bad.err" ||
        { echo "  exit $status: $(head -c 300 "$tmp/bad.err")"; return 1; }
}
check "--lines 3, a bad fifth line: stderr names line 5 of the grid" bad_line_named

cp "$tmp/results.jsonl" "$tmp/before.jsonl"
sweep --jobs 2 --joblog "$tmp/log" --resume "$tmp/grid.jsonl" "$tmp/results.jsonl"
check "a resumed finished sweep: exit 0" test $? -eq 0
check "... runs no job (the job log unchanged)" test "$(wc -l <"$tmp/log")" -eq 13
check "... adds no record" cmp -s "$tmp/before.jsonl" "$tmp/results.jsonl"

# An interruption after jobs 1-7: the log and the records of the others are lost.
head -8 "$tmp/log" >"$tmp/cut.log"
done_jobs=$(awk 'NR > 1 {print $1}' "$tmp/cut.log" | sort -n | tr '\n' ' ')
"$PY" -c 'import json, sys
done = set(sys.argv[2].split())
for l in open(sys.argv[1]):
    if json.loads(l)["provenance"]["PARALLEL_SEQ"] in done:
        print(l, end="")' "$tmp/results.jsonl" "$done_jobs" >"$tmp/cut.jsonl"
sweep --jobs 2 --joblog "$tmp/cut.log" --resume "$tmp/grid.jsonl" "$tmp/cut.jsonl"
check "an interrupted sweep resumed: exit 0" test $? -eq 0
check "... runs exactly the 5 jobs that had not ended" test "$(wc -l <"$tmp/cut.log")" -eq 13 -a \
    "$(awk 'NR > 1 {print $1}' "$tmp/cut.log" | sort -n | uniq | wc -l)" -eq 12
check "... and merges to the same numbers" cmp -s <(merged_numbers "$tmp/cut.jsonl") <(merged_numbers "$tmp/one-process.jsonl")

# Several configurations per job, and GNU parallel's login file (':' is this machine).
echo : >"$tmp/logins"
sweep --lines 5 --sshloginfile "$tmp/logins" "$tmp/grid.jsonl" "$tmp/batched.jsonl"
check "--lines 5 --sshloginfile: exit 0, 3 jobs" test $? -eq 0 -a \
    "$(awk 'NR > 1' "$tmp/batched.jsonl.joblog" | wc -l)" -eq 3
check "... the same numbers" cmp -s <(merged_numbers "$tmp/batched.jsonl") <(merged_numbers "$tmp/one-process.jsonl")

# Lines refused as too long (grid --max-time baked in): --resume runs the failed jobs again,
# with --max-time (which overrides the lines' "max_time"); merge leaves the failed records out.
"$BIN" grid 'T=8,16 seeds=4' -d 16 -L 2 --shards 2 --max-time 1e-9 >"$tmp/tight.jsonl"
sweep --jobs 2 --lines 2 --joblog "$tmp/tight.log" "$tmp/tight.jsonl" "$tmp/tight-results.jsonl" 2>/dev/null
check "every line above its max_time: 2 failed jobs" test $? -eq 2
sweep --jobs 2 --lines 2 --joblog "$tmp/tight.log" --resume --max-time 1000 "$tmp/tight.jsonl" \
    "$tmp/tight-results.jsonl" 2>"$tmp/err"
check "--resume --max-time 1000: the failed jobs run again, exit 0" test $? -eq 0 -a \
    "$(awk 'NR > 1 && $7 == 0' "$tmp/tight.log" | wc -l)" -eq 2
"$BIN" --batch --jsonl <"$tmp/tight.jsonl" --max-time 1000 >"$tmp/tight-one.jsonl"
tight_merged() {
    local a
    a=$(merged_numbers "$tmp/tight-results.jsonl" 2>/dev/null) && [ -n "$a" ] &&
        [ "$a" = "$(merged_numbers "$tmp/tight-one.jsonl")" ]
}
check "... merged: the failed records left out, the numbers of one process" tight_merged
sweep --jobs 2 --lines 2 --joblog "$tmp/tight.log" --resume "$tmp/tight.jsonl" "$tmp/tight-results.jsonl"
check "... resumed again: no job run" test $? -eq 0 -a "$(awk 'NR > 1' "$tmp/tight.log" | wc -l)" -eq 4

refused() { refused_running scripts/sweep-parallel.sh -- "$@"; } # expected-message -- args...
check "bad --jobs" refused "--jobs '0': accepted a whole number from 1" -- --jobs 0 "$tmp/grid.jsonl" "$tmp/x"
check "bad --lines" refused "--lines 'x': accepted a whole number from 1" -- --lines x "$tmp/grid.jsonl" "$tmp/x"
check "missing configurations" refused "CONFIGS '$tmp/none': not a readable file" -- "$tmp/none" "$tmp/x"
check "one argument" refused "expected CONFIGS.jsonl and RESULTS.jsonl, found 1 arguments" -- "$tmp/grid.jsonl"
check "an unknown option" refused "unknown option '--bogus'" -- --bogus "$tmp/grid.jsonl" "$tmp/x"
check "a missing binary" refused "--bin '$tmp/nothing': not an executable" -- --bin "$tmp/nothing" "$tmp/grid.jsonl" "$tmp/x"
check "an unreadable login file" refused "--sshloginfile '$tmp/none': not a readable file" -- --sshloginfile "$tmp/none" "$tmp/grid.jsonl" "$tmp/x"

finish
