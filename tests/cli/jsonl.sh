#!/bin/bash
# --batch --jsonl: one configuration per stdin line, one record per stdout line in input
# order; each record's numbers are those of a --batch run of the same settings in its own
# process (so reusing the workspace between lines changes nothing); a bad line in the middle
# gives an error record and the run goes on; the exit status says whether any line failed.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

base=(-T 16 -d 24 -L 3)
# Lines sharing weights (depth, gap, seeds change) so that the kept workspace is used, a bad
# line in the middle, a blank line, and a line that overrides the command line's sizes.
cat >"$tmp/in.jsonl" <<'LINES'
{"depth": 4, "seeds": 3}
{"depth": 2, "gap": "center", "seeds": 3}
{"T": 99999}

{"attention": "markov", "mask": "causal", "seed": 7}
{"T": 8, "d": 8, "d_qk": 8, "sigma_qk": 0.5, "layer": 2}
{"T": 64, "d": 64, "attention": "markov", "mask": "causal", "gap": "outliers", "depth": 8}
{"T": 64, "d": 64, "attention": "relu", "depth": 4}
LINES
"$BIN" --batch --jsonl "${base[@]}" <"$tmp/in.jsonl" >"$tmp/out.jsonl" 2>"$tmp/err"
status=$?
check "a bad line makes the exit status 2" test "$status" -eq 2
check "stderr names the bad line, the key and what is accepted" \
    grep -qF "attnscope: line 3: \"T\": -T/--tokens '99999': accepted a whole number 2..4096" "$tmp/err"
check "stderr says nothing of the good lines" test "$(wc -l <"$tmp/err")" -eq 1
check "one record per non-blank line" test "$(wc -l <"$tmp/out.jsonl")" -eq 7

# The same settings, one --batch process each.
"$BIN" --batch "${base[@]}" -L 4 --seeds 3 >"$tmp/1.json" &&
    "$BIN" --batch "${base[@]}" -L 2 -g center --seeds 3 >"$tmp/2.json" &&
    "$BIN" --batch "${base[@]}" -a markov -m causal --seed 7 >"$tmp/5.json" &&
    "$BIN" --batch "${base[@]}" -T 8 -d 8 -s 0.5 -l 2 >"$tmp/6.json" &&
    "$BIN" --batch "${base[@]}" -T 64 -d 64 -a markov -m causal -g outliers -L 8 >"$tmp/7.json" &&
    "$BIN" --batch "${base[@]}" -T 64 -d 64 -a relu -L 4 >"$tmp/8.json"
check "the reference runs succeed" test $? -eq 0

"$PY" - "$tmp" >"$tmp/compare" 2>&1 <<'PY'
import json, sys
tmp = sys.argv[1]
records = [json.loads(line) for line in open(tmp + "/out.jsonl")]
added = {"line", "blas_threads", "elapsed_seconds", "provenance"}
failures = []
if [r["line"] for r in records] != [1, 2, 3, 5, 6, 7, 8]:
    failures.append("lines out of order: %s" % [r["line"] for r in records])
for record in records:
    if "error" in record:
        continue
    reference = json.load(open("%s/%d.json" % (tmp, record["line"])))
    if set(record) - added != set(reference):
        failures.append("line %d: keys differ: %s" % (record["line"], set(record) ^ set(reference)))
    for key in reference:
        if record.get(key) != reference[key]:
            failures.append("line %d: %s differs from --batch" % (record["line"], key))
    if not (record["blas_threads"] >= 1 and record["elapsed_seconds"] >= 0):
        failures.append("line %d: blas_threads or elapsed_seconds missing" % record["line"])
    p = record["provenance"]
    if p.get("line") != record["line"] or not p.get("host") or p.get("command") != "attnscope --batch --jsonl":
        failures.append("line %d: provenance %s" % (record["line"], p))
bad = records[2]
if set(bad) != {"attnscope", "line", "error", "provenance"} or "accepted a whole number" not in bad["error"]:
    failures.append("the bad line's record: %s" % bad)
if failures:
    print("\n".join(failures))
sys.exit(1 if failures else 0)
PY
check "each record equals --batch of its settings, bad line excepted ($(head -c 300 "$tmp/compare"))" test ! -s "$tmp/compare"

# A result's own config object, fed back, reproduces it: the contract's keys are the input's.
"$BIN" --batch -T 12 -d 20 -L 3 -a relu -m window -w 3 -n ln -k scaled --seeds 2 --seed 5 >"$tmp/ref.json"
"$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["config"]))' "$tmp/ref.json" >"$tmp/config.jsonl"
"$BIN" --batch --jsonl <"$tmp/config.jsonl" >"$tmp/again.jsonl"
check "a document's config object fed back: exit 0" test $? -eq 0
same_numbers() {
    "$PY" - "$tmp/ref.json" "$tmp/again.jsonl" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(open(sys.argv[2]).readline())
sys.exit(0 if all(b[k] == a[k] for k in a) else 1)
PY
}
check "... and reproduces that document" same_numbers
# The same with sinks (a number) and without (null, --sink none): both read back.
for sink in 0.5 none; do
    "$BIN" --batch -T 12 -d 20 -L 3 --heads 2 -m causal --sink $sink --sink-std 0.25 >"$tmp/ref.json"
    "$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["config"]))' "$tmp/ref.json" >"$tmp/config.jsonl"
    "$BIN" --batch --jsonl <"$tmp/config.jsonl" >"$tmp/again.jsonl"
    check "--sink $sink: the config object fed back reproduces the document" same_numbers
done

# --sweep-T applies to every line, as to one document.
printf '{"T": 16, "d": 32}\n{"T": 32, "d": 64}\n' | "$BIN" --batch --jsonl --sweep-T -L 2 >"$tmp/sweep.jsonl"
swept() {
    "$PY" -c 'import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if [r["width_sweep"]["T"][-1] for r in records] == [16, 32] else 1)' "$tmp/sweep.jsonl"
}
check "--sweep-T: every record has its width sweep up to its T" swept

printf '' | "$BIN" --batch --jsonl >"$tmp/empty" 2>&1
check "empty input: exit 0, no output" test $? -eq 0 -a ! -s "$tmp/empty"

# A reader that closes early ends the run quietly (SIGPIPE), as with one document.
for i in 1 2 3 4 5 6; do echo '{"T":8,"d":8,"depth":2}'; done >"$tmp/six.jsonl"
first=$("$BIN" --batch --jsonl <"$tmp/six.jsonl" | head -1 | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["line"])')
check "a reader taking one line gets line 1" test "$first" = 1

finish
