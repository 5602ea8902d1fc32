#!/bin/bash
# attnscope merge gives what one whole run gives, beyond the ensemble (merge.sh checks that):
#  - the width sweep (--sweep-T) of 2 shards is the whole run's: its means over the seeds
#    within their rounding bound, its slopes within the bound that follows, refused when one
#    shard lacks it; a key every shard must hold alike ("sigma") refused when it differs;
#  - "weights" names the checkpoint run (its bytes and content hash, which Python's hashlib
#    computes again from the file as SHA-256): a checkpoint's records merge with a copy's, never
#    with drawn weights' or another checkpoint's, nor with a checkpoint's whose two F64 values
#    are negated (the 64-bit FNV-1a of 8-byte words that integ2 took gave both one hash);
#  - a line refused as too long, run again with --max-time (which overrides its "max_time"),
#    its record appended: merge leaves the failed record out, saying so, and merges as the
#    successful records alone would; a record appended twice is left out once; a failed
#    record whose configuration was not run again is refused;
#  - where some seeds have no stable rank by round-off (rank one by rule), the ensemble holds
#    the others, counted per layer (checked against each seed run alone); the whole run's
#    warnings are the first seed's, a later seed's that says why its numbers stop, and the
#    band's, and a merge of shards gives the band's alike;
#  - where a later seed overflows (integ2 said nothing of it, kept the survivor's mean and
#    blamed round-off), the whole run names the seed and the overflow, the mean is null from
#    there on with the seeds lost counted, and the band's warning says so: alike when merged.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

# --- the width sweep ------------------------------------------------------------------------
"$BIN" grid seeds=8 -T 32 -d 32 -L 3 --shards 2 >"$tmp/g3.jsonl" &&
    "$BIN" --batch --jsonl --sweep-T <"$tmp/g3.jsonl" >"$tmp/r3.jsonl" &&
    "$BIN" merge "$tmp/r3.jsonl" >"$tmp/m3.jsonl" &&
    "$BIN" --batch -T 32 -d 32 -L 3 --seeds 8 --sweep-T >"$tmp/one3.json"
check "2 shards with --sweep-T, merged; the whole run" test $? -eq 0
# One run's mean of n values (each x/n added in turn) and merge's Σ n_i m_i / n differ by at
# most 2 n u max|x| (each rounds n additions and divisions); max|x| <= n · mean (sr − 1 >= 0).
# A slope is Σ w_i log y_i with w_i = (log T_i − mean) / Σ (log T_j − mean)², so a relative
# error e of each y moves it by at most Σ |w_i| · e (1 + e).
"$PY" - "$tmp/m3.jsonl" "$tmp/one3.json" "$tmp/r3.jsonl" >"$tmp/why" 2>&1 <<'PY'
import json, math, sys
u = 2.0 ** -53
m = json.loads(open(sys.argv[1]).read())
o = json.load(open(sys.argv[2]))
shards = [json.loads(l) for l in open(sys.argv[3])]
n = 8
failures = []
ms, os_ = m["width_sweep"], o["width_sweep"]
if m["config"]["seeds"] != 8 or ms["T"] != os_["T"] or ms["theory_slope"] != os_["theory_slope"]:
    failures.append(f"seeds {m['config']['seeds']}, T {ms['T']} vs {os_['T']}")
if shards[0]["width_sweep"]["stable_rank_minus_one"] == os_["stable_rank_minus_one"]:
    failures.append("the first shard's sweep is the whole run's: the test cannot tell")
for key, slope in (("stable_rank_minus_one", "slope"), ("stable_rank_minus_one_gap", "slope_gap")):
    worst = 0.0
    for got, want in zip(ms[key], os_[key]):
        tol = 2 * n * u * n * want
        worst = max(worst, tol / want)
        if not abs(got - want) <= tol:
            failures.append(f"{key}: {got!r}, whole run {want!r}, bound {tol:.3g}")
    lx = [math.log(t) for t in ms["T"]]
    mean = sum(lx) / len(lx)
    sxx = sum((x - mean) ** 2 for x in lx)
    bound = sum(abs(x - mean) / sxx for x in lx) * worst * (1 + worst) * 1.01
    if not abs(ms[slope] - os_[slope]) <= bound:
        failures.append(f"{slope}: {ms[slope]!r}, whole run {os_[slope]!r}, bound {bound:.3g}")
print("; ".join(failures))
PY
check "the merged width sweep is the whole run's (means and slopes within the bound) $(head -c 400 "$tmp/why")" \
    test ! -s "$tmp/why" -o "$(tr -d '\n' <"$tmp/why")" = ""

refused() { refused_running "$BIN" merge -- "$@"; }
sed -n 1p "$tmp/r3.jsonl" >"$tmp/first3.jsonl"
sed -n 2p "$tmp/g3.jsonl" | "$BIN" --batch --jsonl >"$tmp/nosweep.jsonl"
check "a shard without the sweep: refused, the key named" refused \
    "$tmp/first3.jsonl:1 and $tmp/nosweep.jsonl:1 hold different keys (\"width_sweep\" is in the first alone)" \
    -- "$tmp/first3.jsonl" "$tmp/nosweep.jsonl"
sed -n 2p "$tmp/r3.jsonl" | sed 's/"sigma": [0-9.e-]*/"sigma": 0.5/' >"$tmp/sigma.jsonl"
check "a shard of another sigma: refused, the key named" refused \
    "$tmp/first3.jsonl:1 and $tmp/sigma.jsonl:1 differ in \"sigma\": they are not parts of one run" \
    -- "$tmp/first3.jsonl" "$tmp/sigma.jsonl"

# --- the checkpoint's identity ---------------------------------------------------------------
"$BIN" -T 16 -d 16 -L 2 --seed 99 --export-weights "$tmp/ck" >/dev/null 2>&1 &&
    "$BIN" -T 16 -d 16 -L 2 --seed 98 --export-weights "$tmp/other" >/dev/null 2>&1 &&
    cp -r "$tmp/ck" "$tmp/copy" && cp -r "$tmp/ck" "$tmp/negated" &&
    "$PY" - "$tmp/negated/model.safetensors" >"$tmp/why" 2>&1 <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
start = 8 + struct.unpack("<Q", data[:8])[0]
assert start % 8 == 0 and b'"F64"' in data[:start], "expected F64 values on 8-byte words"
def fnv(data):  # integ2's content hash: 64-bit FNV-1a over little-endian 8-byte words
    h, p, mask = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1
    for i in range(0, len(data) // 8 * 8, 8):
        h = ((h ^ int.from_bytes(data[i:i + 8], "little")) * p) & mask
    for b in data[len(data) // 8 * 8:]:
        h = ((h ^ b) * p) & mask
    return h
before = fnv(data)
data[start + 7] ^= 0x80  # the sign bits of the first two F64 values (bit 63 of their words)
data[start + 15] ^= 0x80
assert fnv(data) == before, "not the reviewer's collision"
open(sys.argv[1], "wb").write(data)
PY
check "two checkpoints exported, one copied, one with two values negated $(head -c 300 "$tmp/why")" test $? -eq 0
run() { "$BIN" --batch -T 16 -d 16 -L 2 --seeds 2 "$@" 2>/dev/null | tr -d '\n'; echo; }
run --seed 1 --weights "$tmp/ck" >"$tmp/w1.jsonl" &&
    run --seed 3 --weights "$tmp/copy" >"$tmp/w3.jsonl" &&
    run --seed 3 >"$tmp/drawn3.jsonl" &&
    run --seed 3 --weights "$tmp/other" >"$tmp/other3.jsonl" &&
    run --seed 3 --weights "$tmp/negated" >"$tmp/negated3.jsonl" &&
    run --seed 1 --seeds 4 --weights "$tmp/ck" >"$tmp/w-whole.jsonl"
check "runs of the checkpoints and of drawn weights" test $? -eq 0
"$PY" - "$tmp/w1.jsonl" "$tmp/ck/model.safetensors" "$tmp/drawn3.jsonl" "$tmp/other3.jsonl" >"$tmp/why" 2>&1 <<'PY'
import hashlib, json, os, sys
def sha256(path):
    return "sha256:" + hashlib.sha256(open(path, "rb").read()).hexdigest()
w = json.loads(open(sys.argv[1]).read())["weights"]
want = {"path": sys.argv[2], "bytes": os.path.getsize(sys.argv[2]), "content_hash": sha256(sys.argv[2])}
failures = [] if w == want else [f"weights {w}, expected {want}"]
if json.loads(open(sys.argv[3]).read())["weights"] is not None:
    failures.append("drawn weights: \"weights\" is not null")
if json.loads(open(sys.argv[4]).read())["weights"]["content_hash"] == want["content_hash"]:
    failures.append("another checkpoint has the same content hash")
print("; ".join(failures))
PY
check "\"weights\": the path, the bytes and the content hash hashlib's SHA-256 gives $(head -c 300 "$tmp/why")" \
    test "$(tr -d '\n' <"$tmp/why")" = ""
check "a checkpoint's seeds 1..2 and drawn weights' 3..4: refused" refused \
    "is a shard missing?" -- "$tmp/w1.jsonl" "$tmp/drawn3.jsonl"
check "... and another checkpoint's: refused" refused "is a shard missing?" -- "$tmp/w1.jsonl" "$tmp/other3.jsonl"
check "... and the checkpoint's with two values negated: refused" refused "is a shard missing?" -- \
    "$tmp/w1.jsonl" "$tmp/negated3.jsonl"
apart() {
    "$BIN" merge --uneven "$tmp/w1.jsonl" "$tmp/drawn3.jsonl" | "$PY" -c 'import json, sys
r = [json.loads(l) for l in sys.stdin]
sys.exit(0 if len(r) == 2 and sorted(x["config"]["seeds"] for x in r) == [2, 2] and
         sorted(x["weights"] is None for x in r) == [False, True] else 1)'
}
check "... --uneven: two records, each its own weights" apart
"$BIN" merge "$tmp/w1.jsonl" "$tmp/w3.jsonl" >"$tmp/wm.jsonl" 2>"$tmp/err"
check "a checkpoint and its copy elsewhere: merged" test $? -eq 0 -a ! -s "$tmp/err"
check "... the 4-seed run's ensemble means" "$PY" -c 'import json, sys
m, o = (json.loads(open(f).read()) for f in sys.argv[1:])
sys.exit(0 if m["config"]["seeds"] == 4 and m["weights"] == o["weights"] and all(
    abs(a - b) <= 1e-12 * b for a, b in zip(m["stable_rank_mean"], o["stable_rank_mean"])) else 1)' \
    "$tmp/wm.jsonl" "$tmp/w-whole.jsonl"

# --- failed lines run again ------------------------------------------------------------------
same_records() { # merged FILE, FILE: the same records (and some), merged_from aside
    local a
    a=$(merged_numbers "$1") && [ -n "$a" ] && [ "$a" = "$(merged_numbers "$2")" ]
}
"$BIN" grid 'T=8,16' -d 16 -L 2 --seeds 2 --shards 2 --max-time 1e-9 >"$tmp/g6.jsonl"
"$BIN" --batch --jsonl <"$tmp/g6.jsonl" >"$tmp/r6.jsonl" 2>/dev/null
check "every line above its max_time: exit 2, 4 error records" \
    test $? -eq 2 -a "$(grep -c '"error"' "$tmp/r6.jsonl")" -eq 4
check "... the message says how to override" grep -qF \
    "(--max-time on the command line overrides a line's \\\"max_time\\\"; without either the bound is an hour): to go ahead, give --max-time" \
    "$tmp/r6.jsonl"
check "merge refuses the failed records alone" refused \
    "$tmp/r6.jsonl:1: a failed record (error: T = 8, d = 16, depth 2, 1 seed is estimated" -- "$tmp/r6.jsonl"
check "... saying how to recover" refused "run that line again and add its record" -- "$tmp/r6.jsonl"
"$BIN" --batch --jsonl --max-time 1000 <"$tmp/g6.jsonl" >"$tmp/again.jsonl"
check "--max-time on the command line overrides the lines' max_time: 4 records" \
    test $? -eq 0 -a "$(grep -c '"error"' "$tmp/again.jsonl")" -eq 0 -a "$(wc -l <"$tmp/again.jsonl")" -eq 4
cat "$tmp/again.jsonl" >>"$tmp/r6.jsonl"
"$BIN" merge "$tmp/r6.jsonl" >"$tmp/m6.jsonl" 2>"$tmp/err"
check "the failed records and the lines run again: merged, exit 0" test $? -eq 0
check "... each failed record left out, said on stderr" \
    test "$(grep -c "a failed line's record, left out: $tmp/r6.jsonl:[5-8] holds its configuration run again" "$tmp/err")" -eq 4
check "... the records the successful ones alone give" same_records "$tmp/m6.jsonl" "$tmp/again.jsonl"
cat "$tmp/again.jsonl" >>"$tmp/r6.jsonl"
"$BIN" merge "$tmp/r6.jsonl" >"$tmp/m6b.jsonl" 2>"$tmp/err"
check "the successful records appended twice: each left out once, the same records" \
    test $? -eq 0 -a "$(grep -c "left out: the same record as" "$tmp/err")" -eq 4
check "... the same numbers" same_records "$tmp/m6b.jsonl" "$tmp/again.jsonl"
sed -n 1p "$tmp/again.jsonl" | sed 's/"stable_rank_mean": \[\([0-9.e-]*\),/"stable_rank_mean": [1.5,/' >"$tmp/changed.jsonl"
check "the same seeds with other numbers: refused" refused \
    "the same seeds of one configuration with different numbers" -- "$tmp/again.jsonl" "$tmp/changed.jsonl"

# --- seeds without a stable rank -------------------------------------------------------------
# At T = 32, d = 64, L = 8 the counterpart (gap center) of 2 of seeds 1..16 is round-off from
# layer 7 (its equal tokens sent to 0), exactly 0 from layer 7 or 8: the ensemble is over the
# other seeds there, with its count per layer, against each seed run alone (its first-seed
# curve, null where it has no stable rank), none lost; the warnings are the first seed's, the
# one of the seed that vanished first (named, as it says alone, the other counted) and the
# band's; a merge of 4 shards (seeds 1..4 the first) says the first seed's and the band's.
small=(-T 32 -d 64 -L 8)
"$BIN" --batch "${small[@]}" --seeds 16 | tr -d '\n' >"$tmp/band.jsonl" && echo >>"$tmp/band.jsonl" &&
    for s in $(seq 1 16); do "$BIN" --batch "${small[@]}" --seed "$s" | tr -d '\n'; echo; done >"$tmp/alone.jsonl" &&
    "$BIN" grid seeds=16 "${small[@]}" --shards 4 | "$BIN" --batch --jsonl | "$BIN" merge >"$tmp/band-merged.jsonl"
check "16 seeds whole, each alone, and in 4 shards merged" test $? -eq 0
"$PY" - "$tmp/band.jsonl" "$tmp/alone.jsonl" "$tmp/band-merged.jsonl" >"$tmp/why" 2>&1 <<'PY'
import json, math, sys
u = 2.0 ** -53
whole = json.loads(open(sys.argv[1]).read())
alone = [json.loads(l) for l in open(sys.argv[2])]
merged = json.loads(open(sys.argv[3]).read())
failures = []
for p in ("", "counterpart_"):
    for l in range(9):
        xs = [a[p + "stable_rank"][l] for a in alone if a[p + "stable_rank"][l] is not None]
        n = len(xs)
        mean = sum(xs) / n
        m2 = sum((x - mean) ** 2 for x in xs)
        X = max(abs(x) for x in xs)
        for name, doc in (("whole", whole), ("merged", merged)):
            if doc[p + "stable_rank_count"][l] != n:
                failures.append(f"{name} {p}stable_rank_count[{l}] = {doc[p + 'stable_rank_count'][l]}, {n} seeds have one")
            got = doc[p + "stable_rank_mean"][l]
            if got is None or not abs(got - mean) <= 4 * n * u * X:
                failures.append(f"{name} {p}stable_rank_mean[{l}] = {got}, the seeds' {mean}")
            got = doc[p + "stable_rank_m2"][l]
            if got is None or not abs(got - m2) <= 4 * n * u * (m2 + 4 * n * X * X):
                failures.append(f"{name} {p}stable_rank_m2[{l}] = {got}, the seeds' {m2}")
if whole["counterpart_stable_rank_count"][7:] != [14, 14]:
    failures.append(f"counts {whole['counterpart_stable_rank_count']}: not the case this test is about")
for name, doc in (("whole", whole), ("merged", merged)):
    for p in ("", "counterpart_"):
        if doc[p + "stable_rank_lost"] != [0] * 9:
            failures.append(f"{name} {p}stable_rank_lost {doc[p + 'stable_rank_lost']}: none is lost")
band = [w for w in whole["warnings"] if w.startswith("counterpart_stable_rank_mean: from layer 7 some of the 16 seeds")]
if len(band) != 1 or "as few as 14" not in band[0] or "round-off" not in band[0] or "overflow" in band[0]:
    failures.append(f"the band's warning: {whole['warnings']}")
vanished = [(s + 1, w) for s, a in enumerate(alone) for w in a["warnings"] if "network is exactly 0 after layer" in w]
vanished.sort(key=lambda sw: (int(sw[1].split("after layer ")[1].split()[0]), sw[0]))
later = [w for w in whole["warnings"] if w.startswith("seed ")]
if len(vanished) != 2 or later != [f"seed {vanished[0][0]}: {vanished[0][1]}; 1 more of the later seeds likewise"]:
    failures.append(f"the later seeds' warnings {later}, alone they say {vanished}")
first = alone[0]["warnings"]
if whole["warnings"] != first + later + band:
    failures.append(f"the whole run's warnings are not the first seed's, the later seed's and the band's: {whole['warnings']}")
if merged["warnings"] != first + band:
    failures.append(f"merged warnings {merged['warnings']} != the first seed's and the band's")
print("; ".join(failures[:4]))
PY
check "a band over the seeds that have a stable rank, counted; the warnings the first seed's, a later seed's and the band's, merged alike $(head -c 500 "$tmp/why")" \
    test "$(tr -d '\n' <"$tmp/why")" = ""

# The reviewer's run: seed 2 of 1..2 overflows at layer 70, seed 1 does not.
deep=(-T 8 -d 8 -L 70 -k plain --skip-gain 64 --branch-gain 64 --wo gaussian)
"$BIN" --batch "${deep[@]}" --seed 1 --seeds 2 | tr -d '\n' >"$tmp/deep.jsonl" && echo >>"$tmp/deep.jsonl" &&
    for s in 1 2; do "$BIN" --batch "${deep[@]}" --seed "$s" | tr -d '\n'; echo; done >"$tmp/deep-alone.jsonl" &&
    "$BIN" merge "$tmp/deep-alone.jsonl" >"$tmp/deep-merged.jsonl"
check "a later seed overflowing: whole, each alone, merged" test $? -eq 0
"$PY" - "$tmp/deep.jsonl" "$tmp/deep-alone.jsonl" "$tmp/deep-merged.jsonl" >"$tmp/why" 2>&1 <<'PY'
import json, sys
whole = json.loads(open(sys.argv[1]).read())
alone = [json.loads(l) for l in open(sys.argv[2])]
merged = json.loads(open(sys.argv[3]).read())
failures = []
said = [w for w in alone[1]["warnings"] if "overflows the double range at layer 70" in w]
if alone[0]["stable_rank"][70] is None or alone[1]["stable_rank"][70] is not None or len(said) != 1:
    failures.append("not the case this test is about: seed 1 has a stable rank at 70, seed 2 overflows there")
if [w for w in whole["warnings"] if w.startswith("seed ")] != ["seed 2: " + said[0] if said else ""]:
    failures.append(f"the overflow of seed 2 not said as alone: {whole['warnings']}")
for name, doc in (("whole", whole), ("merged", merged)):
    if doc["stable_rank_lost"] != [0] * 70 + [1] or doc["stable_rank_count"][70] != 1:
        failures.append(f"{name}: lost {doc['stable_rank_lost'][68:]}, count {doc['stable_rank_count'][68:]}")
    if doc["stable_rank_mean"][70] is not None or doc["stable_rank_m2"][70] is not None:
        failures.append(f"{name}: the mean at 70 is the survivor's: {doc['stable_rank_mean'][70]}")
    if doc["stable_rank_mean"][69] is None:
        failures.append(f"{name}: no mean at 69")
    band = [w for w in doc["warnings"] if w.startswith("stable_rank_mean: ")]
    if len(band) != 1 or not band[0].startswith("stable_rank_mean: from layer 70 seeds are lost (up to 1 of the 2") or "round-off" in band[0]:
        failures.append(f"{name}: the band's warning {band}")
if [w for w in merged["warnings"] if w.startswith("stable_rank_mean")] != [w for w in whole["warnings"] if w.startswith("stable_rank_mean")]:
    failures.append("the band's warning merged is not the whole run's")
print("; ".join(failures[:4]))
PY
check "... the seed and its overflow named, the mean null from layer 70 with the seed counted lost, the band's warning saying so, merged alike $(head -c 500 "$tmp/why")" \
    test "$(tr -d '\n' <"$tmp/why")" = ""

finish
