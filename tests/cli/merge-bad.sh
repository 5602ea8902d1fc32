#!/bin/bash
# merge refuses what does not fit together, saying why and where (FILE:LINE), with exit 2 and
# nothing on stdout: overlapping or missing seed ranges (one record twice is left out once:
# merge-whole.sh), configurations covering different
# seed ranges (a lost shard at the end) unless --uneven, results that are not those of the
# --grid given (named as outside the grid before any range is compared), other versions or
# generators, failed or stopped runs, records that are not results, a pretty-printed --batch
# document (merge reads JSON Lines), one file named twice, and bad usage.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

"$BIN" grid seeds=8 -T 8 -d 8 -L 2 --shards 4 | "$BIN" --batch --jsonl >"$tmp/parts.jsonl"
check "the shards run" test $? -eq 0 -a "$(wc -l <"$tmp/parts.jsonl")" -eq 4
sed -n 1p "$tmp/parts.jsonl" >"$tmp/first.jsonl"
sed -n 2p "$tmp/parts.jsonl" >"$tmp/second.jsonl"
sed -n '3,4p' "$tmp/parts.jsonl" >"$tmp/rest.jsonl"

refused() { refused_running "$BIN" merge -- "$@"; } # expected-message -- merge arguments...

"$BIN" grid seeds=4 -T 8 -d 8 -L 2 | "$BIN" --batch --jsonl >"$tmp/four.jsonl"
check "ranges that overlap: both places named" refused \
    "$tmp/parts.jsonl:1 (seeds 1..2) and $tmp/four.jsonl:1 (seeds 1..4) overlap: a seed would count twice" \
    -- "$tmp/parts.jsonl" "$tmp/four.jsonl"
check "a missing shard: the gap named" refused \
    "$tmp/first.jsonl:1 (seeds 1..2) and $tmp/rest.jsonl:1 (seeds 5..6) leave a gap: the seeds between are missing" \
    -- "$tmp/first.jsonl" "$tmp/rest.jsonl"
sed 's/"attnscope": "0.1.0"/"attnscope": "0.0.9"/' "$tmp/second.jsonl" >"$tmp/old.jsonl"
check "another version" refused "is attnscope 0.0.9" -- "$tmp/first.jsonl" "$tmp/old.jsonl" "$tmp/rest.jsonl"
check "... says why" refused "results of different versions or generators are not merged" -- \
    "$tmp/first.jsonl" "$tmp/old.jsonl" "$tmp/rest.jsonl"
sed 's/"rng": "[^"]*"/"rng": "pcg64"/' "$tmp/second.jsonl" >"$tmp/rng.jsonl"
check "another generator" refused "(pcg64)" -- "$tmp/first.jsonl" "$tmp/rng.jsonl" "$tmp/rest.jsonl"
printf '{"T": 99999}\n' | "$BIN" --batch --jsonl -T 8 -d 8 >"$tmp/failed.jsonl" 2>/dev/null
check "a failed record" refused \
    "$tmp/failed.jsonl:1: a failed record (error: \"T\": -T/--tokens '99999'" -- "$tmp/failed.jsonl"
sed 's/"seeds_done": 2/"seeds_done": 1/' "$tmp/first.jsonl" >"$tmp/stopped.jsonl"
check "a stopped run" refused "$tmp/stopped.jsonl:1: seeds_done 1 of seeds 2: a run stopped early cannot be merged" \
    -- "$tmp/stopped.jsonl"
sed 's/"stable_rank_m2"/"m2_renamed"/' "$tmp/first.jsonl" >"$tmp/nom2.jsonl"
check "a record without M2" refused "$tmp/nom2.jsonl:1: \"stable_rank_m2\": expected an array, found nothing" \
    -- "$tmp/nom2.jsonl"
sed 's/"stable_rank_mean": \[[^]]*\]/"stable_rank_mean": [1,2]/' "$tmp/first.jsonl" >"$tmp/short.jsonl"
check "a per-layer array of the wrong length" refused \
    "\"stable_rank_mean\": expected 3 values (layers 0..depth), found 2" -- "$tmp/short.jsonl"
sed 's/"stable_rank_mean": \[/"stable_rank_mean": ["x",/' "$tmp/first.jsonl" >"$tmp/string.jsonl"
check "a per-layer array holding a string" refused \
    "\"stable_rank_mean\": expected numbers or null, found a string" -- "$tmp/string.jsonl"
sed 's/"T":8,/"T":9999,/' "$tmp/first.jsonl" >"$tmp/config.jsonl"
check "a config out of range" refused "$tmp/config.jsonl:1: config: \"T\": -T/--tokens '9999'" -- "$tmp/config.jsonl"
sed 's/"skip":"none",//' "$tmp/first.jsonl" >"$tmp/noskip.jsonl"
check "a config without a setting" refused "config: \"skip\" is missing" -- "$tmp/noskip.jsonl"
printf '{"T": 8}\n' >"$tmp/configs.jsonl"
check "a configuration instead of a result" refused "$tmp/configs.jsonl:1: \"attnscope\": expected a string, found nothing" \
    -- "$tmp/configs.jsonl"
printf '\n[1]\n' >"$tmp/array.jsonl"
check "not an object (line numbers count blank lines)" refused \
    "$tmp/array.jsonl:2: expected a result record (an object), found an array" -- "$tmp/array.jsonl"
{ cat "$tmp/first.jsonl"; printf '{"attnscope": \n'; } >"$tmp/cut.jsonl"
check "a cut line" refused "$tmp/cut.jsonl:2: JSON byte 16: expected a value, found the end" -- "$tmp/cut.jsonl"
# --batch's document is valid JSON over many lines, not JSON Lines: said as such (and the line
# count checked against wc), from a file or standard input; a broken first line that is no
# document either keeps the parser's message.
"$BIN" --batch -T 8 -d 8 -L 2 --seeds 2 >"$tmp/pretty.json"
lines=$(wc -l <"$tmp/pretty.json")
check "a pretty-printed --batch document: merge reads JSON Lines, as --batch --jsonl or jq -c writes" \
    refused "merge: $tmp/pretty.json holds one JSON document over $lines lines (as --batch writes it); merge reads JSON Lines, one record a line, as --batch --jsonl or jq -c writes" \
    -- "$tmp/pretty.json"
pretty_stdin() {
    "$BIN" merge <"$tmp/pretty.json" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    [ $status -eq 2 ] && [ ! -s "$tmp/out" ] &&
        grep -qF "merge: standard input holds one JSON document over $lines lines" "$tmp/err" ||
        { echo "  exit $status: $(head -c 300 "$tmp/err")"; return 1; }
}
check "... the same from standard input" pretty_stdin
{ printf '{"attnscope":\n'; cat "$tmp/first.jsonl"; } >"$tmp/broken.jsonl"
check "a broken first line, the file no one document: the parser's message" refused \
    "$tmp/broken.jsonl:1: JSON byte 15: expected a value, found the end" -- "$tmp/broken.jsonl"
# One file named twice is refused as such, by its path or by its device and inode, before
# its records are compared (they would all be repeats).
check "a file given twice" refused "merge: '$tmp/parts.jsonl' is given twice: give each file once" \
    -- "$tmp/parts.jsonl" "$tmp/first.jsonl" "$tmp/parts.jsonl"
ln "$tmp/parts.jsonl" "$tmp/linked.jsonl"
check "... by another path (a hard link): the same device and inode" refused \
    "merge: '$tmp/parts.jsonl' and '$tmp/linked.jsonl' are the same file (one device and inode): give each file once" \
    -- "$tmp/parts.jsonl" "$tmp/linked.jsonl"
check "... standard input twice" refused "merge: - (standard input) is given twice: give it once" -- - -
# A lost last shard leaves a range that still tiles: the other configuration's range tells.
"$BIN" grid gap=off,center seeds=8 -T 8 -d 8 -L 2 --shards 4 | "$BIN" --batch --jsonl >"$tmp/two.jsonl"
head -7 "$tmp/two.jsonl" >"$tmp/lost.jsonl"
check "a lost last shard of one configuration" refused \
    "$tmp/lost.jsonl:1 begins seeds 1..8 of its configuration, $tmp/lost.jsonl:5 seeds 1..6 of another (other settings or other weights): is a shard missing?" \
    -- "$tmp/lost.jsonl"
uneven() {
    "$BIN" merge --uneven "$tmp/lost.jsonl" | "$PY" -c 'import json, sys
sys.exit(0 if [json.loads(l)["config"]["seeds"] for l in sys.stdin] == [8, 6] else 1)'
}
check "... accepted with --uneven: 8 and 6 seeds" uneven
# --grid: the results must be the grid's configurations, each with the grid's seeds.
"$BIN" grid gap=off,center seeds=8 -T 8 -d 8 -L 2 --shards 4 >"$tmp/grid.jsonl"
head -4 "$tmp/two.jsonl" >"$tmp/half.jsonl"
check "--grid: a configuration of the grid without results" refused \
    "$tmp/grid.jsonl:5: no record of this configuration (seeds 1..8) among the results" -- --grid "$tmp/grid.jsonl" "$tmp/half.jsonl"
head -4 "$tmp/grid.jsonl" >"$tmp/grid-off.jsonl"
"$BIN" grid seeds=4 -T 16 -d 16 -L 2 | "$BIN" --batch --jsonl >"$tmp/other-grid.jsonl"
check "--grid: results of another grid with another seed range: not one of the grid, without --uneven" \
    refused "$tmp/other-grid.jsonl:1: its configuration is not one of the grid $tmp/grid-off.jsonl" \
    -- --grid "$tmp/grid-off.jsonl" "$tmp/half.jsonl" "$tmp/other-grid.jsonl"
check "--grid: results of a configuration outside the grid" refused \
    "$tmp/two.jsonl:5: its configuration is not one of the grid $tmp/grid-off.jsonl" -- --grid "$tmp/grid-off.jsonl" "$tmp/two.jsonl"
"$BIN" grid gap=off,center seeds=16 -T 8 -d 8 -L 2 >"$tmp/grid16.jsonl"
check "--grid: other seeds than the grid's" refused \
    "$tmp/two.jsonl:1: seeds 1..8, where $tmp/grid16.jsonl:1 asks for seeds 1..16" -- --grid "$tmp/grid16.jsonl" "$tmp/two.jsonl"
check "--grid: a missing grid file" refused "merge: --grid '$tmp/none': No such file or directory" -- --grid "$tmp/none" "$tmp/two.jsonl"
check "--grid without a value" refused "merge: --grid needs a value" -- "$tmp/two.jsonl" --grid
printf '{"T": 1}\n' >"$tmp/bad-grid.jsonl"
check "--grid: a bad line of the grid" refused "$tmp/bad-grid.jsonl:1: \"T\": -T/--tokens '1': accepted a whole number 2..4096" \
    -- --grid "$tmp/bad-grid.jsonl" "$tmp/two.jsonl"
check "a missing file" refused "merge: '$tmp/none.jsonl': No such file or directory" -- "$tmp/none.jsonl"
check "a directory" refused "merge: '$tmp': Is a directory" -- "$tmp"
check "an unknown option" refused "merge: unknown option '--tsv'; accepted: FILE... (- for standard input), --csv, --uneven and --grid FILE" -- --tsv "$tmp/first.jsonl"

finish
