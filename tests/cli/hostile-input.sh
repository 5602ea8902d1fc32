#!/bin/bash
# Hostile input (issue 26): every text input reads lines through one bounded reader, and the
# JSON reader bounds what a document may make it take; each check here is a reproduction of
# the issue that exited 0, hung or took seconds before.  The large inputs are generated here,
# never committed.  Checks under an address-space limit (ulimit -v) are skipped, and said
# so, when the binary is built with AddressSanitizer, which cannot run under one.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
asan=false
grep -qa __asan_init "$BIN" && asan=true

refused() { ends_saying "$@"; } # status expected-message -- command args...
# ulimit's option and value, stdin, out or err, expected -- command args...: under that limit
# the command exits 2 and its stdout or stderr ($tmp/out, $tmp/err) says what was expected.
limited_refusal() {
    local option=$1 value=$2 input=$3 where=$4 says=$5
    shift 6
    (ulimit "$option" "$value"; exec "$@") <"$input" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && grep -qF -- "$says" "$tmp/$where" ||
        { echo "  status $status, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}

# 1. A line above the bound (64 MiB) is an error naming the file and the line, not the end.
printf '{"T": 8, "d": 8, "depth": 1}\n' >"$tmp/long.jsonl"
head -c $((65 << 20)) /dev/zero | tr '\0' ' ' >>"$tmp/long.jsonl"
printf '\n{"T": 8, "d": 8, "depth": 1}\n' >>"$tmp/long.jsonl"
jsonl_long() {
    "$BIN" --batch --jsonl <"$tmp/long.jsonl" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
        grep -qF "standard input:2: a line longer than 64 MiB" "$tmp/err" ||
        { echo "  status $status, $(wc -l <"$tmp/out") records, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "--jsonl: a 65 MiB line: line 2 named, exit 2, the record before it kept" jsonl_long
tail -n +2 "$tmp/long.jsonl" >"$tmp/long-first.jsonl"
{ echo "tokens = 8"; cat "$tmp/long-first.jsonl"; } >"$tmp/long.preset"
check "--preset: a 65 MiB line named" refused 2 "$tmp/long.preset:2: a line longer than 64 MiB" -- \
    "$BIN" --batch --preset "$tmp/long.preset"
check "merge: a 65 MiB line named" refused 2 "$tmp/long-first.jsonl:1: a line longer than 64 MiB" -- \
    "$BIN" merge "$tmp/long-first.jsonl"
"$BIN" grid -T 8 -d 8 -L 1 >"$tmp/grid.jsonl"
cat "$tmp/long.jsonl" >>"$tmp/grid.jsonl"
check "merge --grid: a 65 MiB line named" refused 2 "$tmp/grid.jsonl:3: a line longer than 64 MiB" -- \
    "$BIN" merge --grid "$tmp/grid.jsonl" "$tmp/long.jsonl"
if $asan; then
    skip "--jsonl under ulimit -v 1000000: the long line refused, not taken as the end" "AddressSanitizer cannot run under ulimit -v"
else
    check "--jsonl under ulimit -v 1000000: the long line refused, not taken as the end" \
        limited_refusal -v 1000000 "$tmp/long.jsonl" err "standard input:2:" -- "$BIN" --batch --jsonl
fi

# 1, 4. Only regular files are read, and opening never blocks: a device, a FIFO, a folder.
check "--preset /dev/zero: a device, exit 2" refused 2 "'/dev/zero': a character device, not a regular file" -- \
    "$BIN" --batch --preset /dev/zero
mkfifo "$tmp/fifo.preset"
check "--preset FIFO: refused at once, not waited on" refused 2 "'$tmp/fifo.preset': a FIFO, not a regular file" -- \
    timeout 20 "$BIN" --batch --preset "$tmp/fifo.preset"
check "merge FIFO: refused at once" refused 2 "'$tmp/fifo.preset': a FIFO, not a regular file" -- \
    timeout 20 "$BIN" merge "$tmp/fifo.preset"
check "merge --grid /dev/zero" refused 2 "--grid '/dev/zero': a character device, not a regular file" -- \
    "$BIN" merge --grid /dev/zero "$tmp/long.jsonl"

# 2. Duplicate keys are found by hashing: 200 000 keys (a quadratic check took 14 s for
#    80 000 and would take minutes here) are read within 20 s of CPU time, a bound two
#    orders of magnitude above what the hash needs (0.1 s), so no machine is too slow for it.
"$PY" -c 'import sys; sys.stdout.write("{" + ",".join("\"k%d\":0" % i for i in range(200000)) + ",\"k7\":1}\n")' >"$tmp/keys.jsonl"
check "200 000 keys and a duplicate at the end: found within 20 CPU seconds" \
    limited_refusal -t 20 "$tmp/keys.jsonl" out 'duplicate key \"k7\"' -- "$BIN" --batch --jsonl

# 5. A document's values are bounded: a 20 MB "[0,0,...]" line (10^7 values, once 885 MB
#    of memory) is refused at the 2^20th value.
"$PY" -c 'import sys; sys.stdout.write("[" + "0," * 10000000 + "0]\n")' >"$tmp/zeros.jsonl"
check "--jsonl: 10^7 values refused at the bound" refused 2 "more than 1048576 values" -- \
    "$BIN" merge "$tmp/zeros.jsonl"
if $asan; then
    skip "... within 400 MB of address space" "AddressSanitizer cannot run under ulimit -v"
else
    check "... within 400 MB of address space" \
        limited_refusal -v 400000 /dev/null err "more than 1048576 values" -- "$BIN" merge "$tmp/zeros.jsonl"
fi

# 6. merge of an empty or blank file: nothing to merge is bad input, not a crash.
: >"$tmp/empty.jsonl"
printf '\n  \n\t\n' >"$tmp/blank.jsonl"
check "merge of an empty file" refused 2 "merge: $tmp/empty.jsonl holds no records (it is empty or blank)" -- \
    "$BIN" merge "$tmp/empty.jsonl"
check "merge of a blank file" refused 2 "merge: $tmp/blank.jsonl holds no records" -- \
    "$BIN" merge "$tmp/blank.jsonl"

# 10. A setting's string holds no NUL; d_qk is read as d is.  The line's record says why.
line_refused() { # line expected-message
    echo "$1" | "$BIN" --batch --jsonl >"$tmp/out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && grep -qF -- "$2" "$tmp/err" && grep -qF '"error":' "$tmp/out" ||
        { echo "  status $status, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check '"gap": "center\u0000anything" refused' line_refused \
    '{"T": 8, "d": 8, "depth": 1, "gap": "center\u0000anything"}' '"gap": a string holding \u0000'
check '"d_qk": 8.5 refused as "d": 8.5 is' line_refused \
    '{"T": 8, "d": 8, "depth": 1, "d_qk": 8.5}' "\"d_qk\": -d/--width '8.5': accepted a whole number"

# 11. merge refuses statistics no run can give.
"$BIN" grid seeds=4 -T 8 -d 8 -L 1 --shards 2 | "$BIN" --batch --jsonl >"$tmp/parts.jsonl"
edited() { # python-expression-on-r output
    "$PY" -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[1])
exec(sys.argv[2])
print(lines[0]); print(json.dumps(r))' "$tmp/parts.jsonl" "$1" >"$2"
}
check "the shards merge as they are" bash -c '"$1" merge "$2" >/dev/null' _ "$BIN" "$tmp/parts.jsonl"
edited 'r["stable_rank_m2"][1] = -1e-3' "$tmp/negative.jsonl"
check "a negative M2" refused 2 '"stable_rank_m2"[1] = -0.001: the M2 of 2 stable ranks' -- \
    "$BIN" merge "$tmp/negative.jsonl"
edited 'r["counterpart_stable_rank_mean"][0] = 1e308' "$tmp/huge.jsonl"
check "a mean of 1e308" refused 2 '"counterpart_stable_rank_mean"[0] = 1e+308: a mean stable rank lies in [1, min(T, d) = 8]' -- \
    "$BIN" merge "$tmp/huge.jsonl"
edited 'r["stable_rank_mean"][1] = -1e308' "$tmp/tiny.jsonl"
check "a mean of -1e308" refused 2 '"stable_rank_mean"[1] = -1e+308' -- "$BIN" merge "$tmp/tiny.jsonl"
edited 'r["warnings"] = "x"' "$tmp/warnings.jsonl"
check '"warnings": "x"' refused 2 '"warnings": expected an array of strings, found a string' -- \
    "$BIN" merge "$tmp/warnings.jsonl"

# 13. Nothing written is never a success.
for args in --help --version "merge --help" "grid --help"; do
    # shellcheck disable=SC2086
    check "$args > /dev/full: exit 1 with the reason" refused 1 "stdout: No space left on device" -- \
        bash -c '"$0" "$@" >/dev/full' "$BIN" $args
done
finish
