#!/bin/bash
# attnscope merge: 4 shards of 16 seeds merged equal one run of 64 seeds, for two
# configurations of one grid: every first-seed value to the last bit, the ensemble's mean,
# std and M2 per layer within the rounding bound derived below; the result does not depend
# on the order of the files (records come out in the order of their settings); --csv is one row per configuration and layer with the same
# numbers; 2 seeds in 2 shards merge to the 2-seed run's stable-rank means bit for bit.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

grid=('T=16 gap=off,center mask=full,causal seeds=64' -d 24 -L 4 --seed 11)
"$BIN" grid "${grid[@]}" --shards 4 >"$tmp/shards.jsonl" &&
    "$BIN" --batch --jsonl <"$tmp/shards.jsonl" >"$tmp/parts.jsonl" &&
    "$BIN" grid "${grid[@]}" | "$BIN" --batch --jsonl >"$tmp/one.jsonl"
check "the shards and the single runs succeed" test $? -eq 0
# The shards in two files, in an order other than the seeds'.
sed -n '1~2p' "$tmp/parts.jsonl" >"$tmp/odd.jsonl"
sed -n '2~2p' "$tmp/parts.jsonl" | tac >"$tmp/even.jsonl"
"$BIN" merge "$tmp/even.jsonl" "$tmp/odd.jsonl" >"$tmp/merged.jsonl" 2>"$tmp/err"
check "merge: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$tmp/err"
"$BIN" merge --grid "$tmp/shards.jsonl" "$tmp/parts.jsonl" >"$tmp/checked.jsonl"
check "merge --grid: the results are the grid's, the same records" cmp -s "$tmp/checked.jsonl" \
    <("$BIN" merge "$tmp/parts.jsonl")

# The bound.  With u = 2^-53, n = 64 values x_i, |x_i| <= X (X <= |mean| + sqrt(M2), since
# every (x_i - mean)^2 <= M2), k = 4 shards:
#  - one run sums n values and divides: |error of its mean| <= n u X; each shard's mean
#    likewise (its size in place of n), and Chan's updates add a few u X each; so the two
#    means differ by at most 4 n u X.
#  - one run's M2 = sum (x_i - mean)^2 is off by at most (n + 3) u M2 (the error of the mean
#    enters squared); Chan's adds each shard's (size + 3) u M2_j and, per combination, the
#    error of delta^2 n_a n_b / n, where delta = mean_b - mean_a (|delta| <= 2X) carries the
#    two means' errors (<= 2 n u X): <= 2 |delta| (2 n u X) n/4 + 4 u M2 <= 2 n^2 u X^2 + 4 u M2.
#    So |difference of M2| <= 4 n u (M2 + k n X^2).
#  - std = sqrt(M2 / (n - 1)) and |a - b| = |a^2 - b^2| / (a + b) <= sqrt(|a^2 - b^2|): the
#    std bound is the M2 bound / (n - 1) through the smaller of the two.
"$PY" - "$tmp/merged.jsonl" "$tmp/one.jsonl" >"$tmp/why" 2>&1 <<'PY'
import json, math, sys
u, k = 2.0 ** -53, 4
merged = [json.loads(l) for l in open(sys.argv[1])]
by_config = {json.dumps(d["config"]): d for d in map(json.loads, open(sys.argv[2]))}
single = [by_config.get(json.dumps(m["config"]), {"config": None}) for m in merged]
run_keys = {"line", "blas_threads", "elapsed_seconds", "provenance"}
ensemble = {f"{p}stable_rank_{s}" for p in ("", "counterpart_") for s in ("mean", "std", "m2")}
failures, compared = [], 0
if len(merged) != 4 or len(by_config) != 4:
    failures.append(f"{len(merged)} merged records, {len(by_config)} single runs")
for m, o in zip(merged, single):
    if m["config"] != o["config"]:
        failures.append(f"config {m['config']} != {o['config']}")
        continue
    n = o["config"]["seeds"]
    if set(m) - {"merged_from"} != set(o) - run_keys:
        failures.append(f"keys differ: {set(m) ^ set(o)}")
    # The warnings are the first seed's and the ensemble's: the run's, no more.
    if o["warnings"] != m["warnings"]:
        failures.append(f"warnings {m['warnings']}, one run {o['warnings']}")
    for key in set(o) - run_keys - ensemble - {"warnings"}:
        if m[key] != o[key]:
            failures.append(f"{key} differs (a first-seed value: must be identical)")
    for p in ("", "counterpart_"):
        for l, (mean, m2, std) in enumerate(zip(o[p + "stable_rank_mean"], o[p + "stable_rank_m2"], o[p + "stable_rank_std"])):
            X = abs(mean) + math.sqrt(m2)
            tol_mean = 4 * n * u * X
            tol_m2 = 4 * n * u * (m2 + k * n * X * X)
            got_mean, got_m2, got_std = (m[p + "stable_rank_" + s][l] for s in ("mean", "m2", "std"))
            tol_std = min(math.sqrt(tol_m2 / (n - 1)), tol_m2 / (n - 1) / (std + got_std)) if std + got_std > 0 else math.sqrt(tol_m2 / (n - 1))
            for name, got, want, tol in (("mean", got_mean, mean, tol_mean), ("m2", got_m2, m2, tol_m2), ("std", got_std, std, tol_std)):
                compared += 1
                if not abs(got - want) <= tol:
                    failures.append(f"{p}stable_rank_{name}[{l}] = {got!r}, one run {want!r}, bound {tol:.3g}")
    shards = [(s["seed"], s["seeds"]) for s in m["merged_from"]]
    if shards != [(11, 16), (27, 16), (43, 16), (59, 16)]:
        failures.append(f"merged_from {shards}")
    if not all("provenance" in s and "elapsed_seconds" in s for s in m["merged_from"]):
        failures.append("merged_from lacks the shards' provenance")
if compared != 4 * 2 * 5 * 3:
    failures.append(f"{compared} values compared")
if failures:
    print("; ".join(failures[:5]))
PY
check "merged 4 x 16 equals one run of 64 (first seed exact, ensemble within the bound) $(head -c 400 "$tmp/why")" test ! -s "$tmp/why"

"$BIN" merge "$tmp/parts.jsonl" >"$tmp/sorted.jsonl"
strip() { "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l); d.pop("merged_from"); print(json.dumps(d))' "$1"; }
check "the order of files and lines changes no number" \
    cmp -s <(strip "$tmp/merged.jsonl") <(strip "$tmp/sorted.jsonl")
"$BIN" merge - <"$tmp/parts.jsonl" >"$tmp/stdin.jsonl"
check "'-' reads standard input: same numbers" cmp -s <(strip "$tmp/stdin.jsonl") <(strip "$tmp/sorted.jsonl")
"$BIN" merge "$tmp/one.jsonl" >"$tmp/alone.jsonl"
check "a whole run merged alone keeps its numbers" cmp -s <(strip "$tmp/alone.jsonl" | sort) <(
    "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    for k in ("line", "blas_threads", "elapsed_seconds", "provenance"): d.pop(k)
    print(json.dumps(d))' "$tmp/one.jsonl" | sort)

"$BIN" merge --csv "$tmp/parts.jsonl" >"$tmp/table.csv"
check "--csv: exit 0" test $? -eq 0
"$PY" - "$tmp/table.csv" "$tmp/sorted.jsonl" >"$tmp/why" 2>&1 <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
merged = [json.loads(l) for l in open(sys.argv[2])]
failures = []
if len(rows) != 4 * 5:
    failures.append(f"{len(rows)} rows")
for i, row in enumerate(rows):
    m, l = merged[i // 5], i % 5
    for key, value in m["config"].items():
        # A setting's off value (--sink none) is null in JSON, spelled as the command line does.
        spelled = "none" if value is None else str(value)
        if key != "d_qk" and row[key] != spelled:
            failures.append(f"row {i}: {key} = {row[key]}, expected {value}")
    if int(row["layer_index"]) != l or row["counterpart_gap"] != m["counterpart_gap"]:
        failures.append(f"row {i}: layer_index {row['layer_index']}")
    for key in ("stable_rank_mean", "stable_rank_std", "counterpart_stable_rank_mean", "counterpart_stable_rank_std"):
        if float(row[key]) != m[key][l]:
            failures.append(f"row {i}: {key} {row[key]} != {m[key][l]}")
if failures:
    print("; ".join(failures[:5]))
PY
check "--csv: one row per configuration and layer, the merged numbers $(head -c 300 "$tmp/why")" test ! -s "$tmp/why"

# No FILE: standard input, as cat reads it; the records are those of `-` (which names its
# parts "-") and of the file itself once the name is the same.
"$BIN" merge <"$tmp/parts.jsonl" >"$tmp/piped.jsonl" 2>"$tmp/err"
check "merge with no FILE reads standard input: exit 0, nothing on stderr" \
    test $? -eq 0 -a -s "$tmp/piped.jsonl" -a ! -s "$tmp/err"
check "... the records 'merge -' writes" cmp -s "$tmp/piped.jsonl" <("$BIN" merge - <"$tmp/parts.jsonl")
check "... the records of the file, its name aside" cmp -s "$tmp/piped.jsonl" \
    <("$BIN" merge "$tmp/parts.jsonl" | sed "s|\"file\":\"$tmp/parts.jsonl\"|\"file\":\"-\"|g")
"$BIN" grid "${grid[@]}" --shards 4 | "$BIN" --batch --jsonl | "$BIN" merge --csv >"$tmp/pipe.csv"
check "a pipe from --batch --jsonl into merge --csv: the table of the file" \
    cmp -s "$tmp/pipe.csv" <("$BIN" merge --csv "$tmp/parts.jsonl")

# A seed's numbers do not depend on its place in its run: the second shard's first seed is the
# whole run's second.  Two seeds as two shards of one: the run's mean (x1 + x2)/2 and merge's
# x1 + (x2 - x1)/2 are then the same double (stable ranks >= 1 of one layer lie within a factor
# 2 of each other, so x2 - x1 is exact, and both round (x1 + x2)/2 once), so the means agree
# bit for bit wherever each seed's stable ranks do.
twin=('T=16 gap=off,center mask=full,causal' -d 16 -L 3 --seed 5 --seeds 2)
"$BIN" grid "${twin[@]}" | "$BIN" --batch --jsonl >"$tmp/twin-one.jsonl" &&
    "$BIN" grid "${twin[@]}" --shards 2 | "$BIN" --batch --jsonl | "$BIN" merge >"$tmp/twin-merged.jsonl"
check "2 seeds in 2 shards: the runs and the merge succeed" test $? -eq 0
"$PY" - "$tmp/twin-one.jsonl" "$tmp/twin-merged.jsonl" >"$tmp/why" 2>&1 <<'PY'
import json, sys
one = {json.dumps(d["config"]): d for d in map(json.loads, open(sys.argv[1]))}
merged = [json.loads(l) for l in open(sys.argv[2])]
failures = [] if len(one) == len(merged) == 4 else [f"{len(one)} runs, {len(merged)} merged"]
for m in merged:
    o = one.get(json.dumps(m["config"]), {})
    for key in ("stable_rank_mean", "counterpart_stable_rank_mean"):
        for l, (got, want) in enumerate(zip(m[key], o.get(key, []))):
            if got != want:
                failures.append(f"{m['config']['mask']} gap={m['config']['gap']} {key}[{l}] = {got!r}, one run {want!r}")
if failures:
    print("; ".join(failures[:3]))
PY
check "2 shards of 1 seed merged: the stable-rank means of the 2-seed run, bit for bit $(head -c 400 "$tmp/why")" \
    test ! -s "$tmp/why"

finish
