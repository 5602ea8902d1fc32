#!/bin/bash
# attnscope grid: the product of its terms in order (the last term varying fastest), on the
# command line's base settings, each configuration split by --shards into contiguous seed
# ranges whose union is its seeds; its lines run with --batch --jsonl.  Then the bad-input
# table: exit 2, nothing on stdout, a message naming the term or option and what is accepted.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

"$BIN" grid 'T=8,16 attention=softmax,markov' gap=off,center seeds=10 -d 16 -L 2 --shards 3 \
    >"$tmp/grid.jsonl" 2>"$tmp/err"
check "grid: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$tmp/err"

"$PY" - "$tmp/grid.jsonl" >"$tmp/why" 2>&1 <<'PY'
import itertools, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
expected = []
for T, a, g in itertools.product([8, 16], ["softmax", "markov"], ["off", "center"]):
    for seed, seeds in [(1, 4), (5, 3), (8, 3)]:
        expected.append(dict(T=T, d=16, depth=2, sigma_qk=1, attention=a, mask="full", window=1,
                             gap=g, layernorm="none", skip="none", layer=1, seed=seed,
                             seeds=seeds))
# The grid's keys as expected; every other setting (the block's, at their defaults) the same
# on every line.
got = [{k: l.get(k) for k in e} for l, e in zip(lines, expected)]
rest = [{k: v for k, v in l.items() if k not in expected[0]} for l in lines]
if len(lines) != len(expected) or got != expected or any(r != rest[0] for r in rest):
    print("got", got[:4], "...")
    sys.exit(1)
PY
check "24 lines: the product in order, shards 1..4, 5..7, 8..10 ($(head -c 300 "$tmp/why"))" test ! -s "$tmp/why"

"$BIN" grid seeds=64 seed=100 --shards 5 -T 8 -d 8 >"$tmp/shards.jsonl"
contiguous() {
    "$PY" - "$tmp/shards.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sizes = [l["seeds"] for l in lines]
starts = [l["seed"] for l in lines]
ok = sizes == [13, 13, 13, 13, 12] and starts == [100, 113, 126, 139, 152]
sys.exit(0 if ok else 1)
PY
}
check "--shards 5 of 64 seeds from 100: contiguous ranges of 13,13,13,13,12" contiguous

"$BIN" grid 'T=8 depth=2,3' -d 8 --seeds 2 | "$BIN" --batch --jsonl >"$tmp/run.jsonl"
check "grid | --batch --jsonl: exit 0, one record per line" \
    test $? -eq 0 -a "$(wc -l <"$tmp/run.jsonl")" -eq 2
"$BIN" grid tokens=8 -d 8 >"$tmp/long.jsonl" && "$BIN" grid T=8 -d 8 >"$tmp/short.jsonl"
check "a term may use the long option name" cmp -s "$tmp/long.jsonl" "$tmp/short.jsonl"
"$BIN" grid >"$tmp/none.jsonl"
check "no term: the base configuration, one line" test "$(wc -l <"$tmp/none.jsonl")" -eq 1
"$BIN" grid --help >"$tmp/help"
check "grid --help: exit 0, the usage names grid" grep -q "attnscope grid" "$tmp/help"

# --max-time passes on to the lines' runs: each line carries "max_time", and --batch --jsonl
# refuses a line estimated above it (an error record, exit 2), as --batch refuses a run.
"$BIN" grid 'T=8,16' -d 16 -L 2 --max-time 90 >"$tmp/bounded.jsonl"
every_line_bounded() {
    "$PY" - "$tmp/bounded.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(lines) == 2 and all(l.get("max_time") == 90 for l in lines) else 1)
PY
}
check "grid --max-time 90: every line carries \"max_time\": 90" every_line_bounded
"$BIN" grid 'T=8 depth=2' -d 8 >"$tmp/unbounded.jsonl"
check "without --max-time: no \"max_time\" member" test "$(grep -c max_time "$tmp/unbounded.jsonl")" -eq 0
"$BIN" grid 'T=8 depth=2' -d 8 --max-time 1e-9 >"$tmp/tiny.jsonl"
"$BIN" --batch --jsonl <"$tmp/tiny.jsonl" >"$tmp/refused.jsonl" 2>"$tmp/refused.err"
status=$?
refused_line() {
    [ "$status" -eq 2 ] && "$PY" - "$tmp/refused.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(lines) == 1 and "above the line's bound of 1e-09 s" in lines[0]["error"] else 1)
PY
}
check "a line above its max_time: an error record naming the bound, exit 2" refused_line
"$BIN" --batch --jsonl --no-confirm <"$tmp/tiny.jsonl" >"$tmp/lifted.jsonl"
check "--no-confirm lifts a line's bound: the record is computed" \
    "$PY" -c 'import json,sys; l=json.loads(open(sys.argv[1]).readline()); sys.exit(0 if "error" not in l and l["config"]["depth"]==2 else 1)' "$tmp/lifted.jsonl"
"$BIN" grid 'T=8 depth=2' -d 8 --max-time 600 | "$BIN" --batch --jsonl >"$tmp/within.jsonl"
check "a line within its max_time runs" test $? -eq 0 -a "$(grep -c '"error"' "$tmp/within.jsonl")" -eq 0
"$BIN" --batch --jsonl <"$tmp/bounded.jsonl" >"$tmp/bounded-results.jsonl"
check "merge --grid reads a grid with max_time (a job's bound, no setting)" \
    "$BIN" merge --csv --grid "$tmp/bounded.jsonl" "$tmp/bounded-results.jsonl" >/dev/null
echo '{"T": 8, "d": 8, "max_time": "soon"}' | "$BIN" --batch --jsonl >/dev/null 2>"$tmp/bad.err"
check "a bad max_time: exit 2, the key and what is accepted named" \
    grep -q '"max_time": accepted a number of seconds above 0, found a string' "$tmp/bad.err"

# Not this machine's memory: a login node's small cgroup (ATTNSCOPE_TEST_CGROUP_DIR, 10 MB, none
# of it in use) does not refuse a configuration meant for a compute node; --batch --jsonl
# refuses the line where it runs under that cgroup (an error record naming the budget, exit 2).
mkdir "$tmp/cgroup" && echo 10000000 >"$tmp/cgroup/memory.max" && echo 0 >"$tmp/cgroup/memory.current"
ATTNSCOPE_TEST_CGROUP_DIR=$tmp/cgroup "$BIN" grid 'T=4096' -d 4096 -L 256 >"$tmp/big.jsonl" 2>"$tmp/big.err"
check "a small cgroup: grid T=4096 -d 4096 -L 256 exits 0, one line, nothing on stderr" \
    test $? -eq 0 -a "$(wc -l <"$tmp/big.jsonl")" -eq 1 -a ! -s "$tmp/big.err"
ATTNSCOPE_TEST_CGROUP_DIR=$tmp/cgroup "$BIN" --batch --jsonl <"$tmp/big.jsonl" >"$tmp/big-run.jsonl" 2>/dev/null
status=$?
refused_where_run() {
    [ "$status" -eq 2 ] && "$PY" - "$tmp/big-run.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(lines) == 1 and "above the memory budget of 9 MiB (set by the cgroup's memory.max" in lines[0]["error"] else 1)
PY
}
check "... --batch --jsonl under that cgroup refuses the line: an error record naming the budget, exit 2" \
    refused_where_run

refused() { refused_running "$BIN" grid -- "$@"; } # expected-message -- args...
check "a bad value names the term and what is accepted" refused \
    "grid term T=: -T/--tokens '5x': accepted a whole number 2..4096" -- T=8,5x
check "an unknown key lists the keys" refused \
    "grid term 'foo=...': unknown key; accepted: T, d, depth," -- foo=1
check "a key twice" refused "grid term 'tokens=...': T is already a term of the grid" -- T=8 tokens=16
check "an empty value" refused "grid term T=: -T/--tokens '': accepted a whole number" -- T=8,
check "a term without a key" refused "grid term '=3': accepted KEY=V1,V2,..." -- =3
check "a word that is no term" refused "grid term 'x': accepted KEY=V1,V2,..." -- 'T=8 x'
check "a configuration that breaks T <= d names it" refused \
    "grid: T=512: -T/--tokens 512 exceeds -d/--width 256" -- T=256,512
check "more shards than seeds" refused \
    "--shards 4: accepted 1..3 for seeds=3 (a shard is a range of at least one of its 3 seeds)" -- seeds=3 --shards 4
for bad in 0 -1 x 1.5 2000 ''; do
    check "--shards '$bad'" refused "--shards '$bad': accepted a whole number 1..1024" -- T=8 --shards "$bad"
done
check "--shards without a value" refused "--shards: needs a value" -- T=8 --shards
check "seeds past the largest seed" refused "pass the largest seed 9007199254740991" -- \
    seed=9007199254740990 seeds=4
check "a run option" refused "grid: --batch is not accepted" -- T=8 --batch
check "--verbose: grid's own refusal, naming the run that takes it, not the screen" \
    refused "grid: --verbose is not accepted (grid prints configurations; attnscope --batch --jsonl --verbose says" -- T=8 --verbose
check "an unknown option" refused "unknown option '--bogus'" -- T=8 --bogus
check "--max-memory: refused, naming the run that checks memory" refused \
    "grid: --max-memory is not accepted (grid checks the configurations' settings, not memory; give --max-memory to attnscope --batch --jsonl" \
    -- 'T=4096' -d 4096 -L 256 --max-memory 10M
values257=$(seq -s, 1 257)
check "more than 256 values in a term" refused "grid term seed=: accepted at most 256 values" -- "seed=$values257"
values250=$(seq -s, 1 250)
check "more than 1000000 lines" refused "grid: more than 1000000 lines; accepted at most that many" -- \
    "seed=$values250" "depth=$(seq -s, 1 50)" "sigma_qk=$(seq -s, 1 4)" seeds=21 --shards 21 -T 8 -d 8
# A value twice would make a configuration twice, whose seeds merge refuses to count twice:
# grid refuses it first, compared as values (1.0 is 1), naming the term and both spellings.
check "a value twice" refused "grid term T=: '8' repeats '8'; accepted distinct values" -- \
    'T=8,8 seeds=2' -d 16 -L 2 --shards 2
check "a value twice, spelled otherwise" refused "grid term sigma_qk=: '1.0' repeats '1'" -- \
    sigma_qk=1,2,1.0
# Configurations that differ only in seed and seeds are one run to merge, which refuses
# their ranges unless they tile one range: grid refuses them first, naming both.
check "seed values closer than the seeds" refused \
    "grid: seed=1 (seeds 1..2) and seed=2 (seeds 2..3) overlap: merge would count a seed twice" -- \
    seed=1,5,2 --seeds 2 -T 8 -d 16 -L 2
check "... with seeds a term, naming the configuration" refused \
    "grid: seed=1 seeds=2 (seeds 1..2) and seed=1 seeds=3 (seeds 1..3) overlap" -- \
    'seed=1,3 seeds=2,3' -T 8 -d 16 -L 2
check "seed values further apart than the seeds: a gap" refused \
    "grid: seed=1 T=8 (seeds 1..2) and seed=10 T=8 (seeds 10..11) leave a gap: merge would refuse the seeds between as missing" -- \
    'seed=1,10 T=8' --seeds 2 -d 16 -L 2
check "a seeds term alone: one seed, ranges overlapping" refused \
    "grid: seeds=2 T=8 (seeds 1..2) and seeds=4 T=8 (seeds 1..4) overlap" -- \
    'seeds=2,4 T=8' -d 16 -L 2
"$BIN" grid seed=1,3 --seeds 2 -T 8 -d 16 -L 2 | "$BIN" --batch --jsonl >"$tmp/touching.jsonl"
touching_merge() {
    "$BIN" merge "$tmp/touching.jsonl" >"$tmp/merged.json" || { echo "  merge: exit $?"; return 1; }
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; sys.exit(0 if (c["seed"], c["seeds"]) == (1, 4) else 1)' "$tmp/merged.json"
}
check "seed=1,3 with 2 seeds: grid | --batch --jsonl | merge exits 0, seeds 1..4 merged" touching_merge
check "an enum value" refused "accepted softmax|markov|relu|sigmoid|linear|uniform|identity" -- attention=soft

finish
