#!/bin/bash
# --export DIR (issue 7): CSV files with headers and the right row counts, well-formed SVG
# with one mark per data point, atomic all-or-nothing writes, and clear failures.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN" --batch -T 48 -d 64 -L 5 --seeds 2 --export "$tmp/out" >"$tmp/doc.json" 2>"$tmp/err"
check "export exits 0 and says where" grep -q "wrote 6 files to $tmp/out" "$tmp/err"
check "JSON still on stdout" "$PY" -c "import json; json.load(open('$tmp/doc.json'))"

rows() { # file expected-lines
    [ "$(wc -l <"$1")" -eq "$2" ] || { echo "  $1: $(wc -l <"$1") lines, expected $2"; return 1; }
}
check "eigenvalues.csv: header + T rows" rows "$tmp/out/eigenvalues.csv" 49
check "singular_values.csv: header + T rows" rows "$tmp/out/singular_values.csv" 49
check "layers.csv: version and settings, header, L+1 rows" rows "$tmp/out/layers.csv" 9
check "CSV headers name the columns" bash -c "head -1 '$tmp/out/eigenvalues.csv' | grep -qx 'index,re,im,modulus,sqrtT_re,sqrtT_im' &&
    sed -n 3p '$tmp/out/layers.csv' | grep -q '^layer,stable_rank,stable_rank_minus_one,'"
check "layers.csv names the version" bash -c "head -1 '$tmp/out/layers.csv' | grep -q '^# attnscope 0\.1\.0'"
settings_reproduce() { # the settings line, given back to the command line, gives the same document
    local settings
    settings=$(sed -n 2p "$tmp/out/layers.csv" | sed 's/^# //')
    # shellcheck disable=SC2086
    "$BIN" --batch $settings >"$tmp/again.json" && cmp -s "$tmp/again.json" "$tmp/doc.json"
}
check "layers.csv's settings line reproduces the run" settings_reproduce

csv_matches_json() {
    "$PY" - "$tmp/out" "$tmp/doc.json" <<'PY'
import csv, json, sys
out, doc = sys.argv[1], json.load(open(sys.argv[2]))
layers = list(csv.DictReader(line for line in open(out + "/layers.csv") if not line.startswith("#")))
columns = [c for c in layers[0] if c != "layer"]
# One schema: every per-layer series of the JSON document is a column, and no other.
series = [k for k, v in doc.items() if isinstance(v, list) and k not in ("eigenvalues", "singular_values", "warnings")]
assert sorted(columns) == sorted(series), (columns, series)
value = lambda text: None if text == "" else float(text)
for name in columns:
    column = [value(r[name]) for r in layers]
    if len(doc[name]) == len(layers) - 1:  # the gradients: layers 1..L, layer 0 empty
        assert column[0] is None, name
        column = column[1:]
    assert column == doc[name], name
sv = [float(r["singular_value"]) for r in csv.DictReader(open(out + "/singular_values.csv"))]
assert sv == doc["singular_values"]
ev = [[float(r["re"]), float(r["im"])] for r in csv.DictReader(open(out + "/eigenvalues.csv"))]
assert ev == doc["eigenvalues"]
PY
}
check "CSV values equal the JSON values exactly" csv_matches_json

check "SVG files are well-formed XML" xmllint --noout "$tmp/out/eigenvalues.svg" "$tmp/out/singular_values.svg" "$tmp/out/stable_rank.svg"
marks() { # file expected
    local n
    n=$(grep -c 'class="point' "$1")
    [ "$n" -eq "$2" ] || { echo "  $1: $n marks, expected $2"; return 1; }
}
check "eigenvalues.svg: one mark per eigenvalue" marks "$tmp/out/eigenvalues.svg" 48
check "singular_values.svg: one mark per singular value" marks "$tmp/out/singular_values.svg" 48
check "stable_rank.svg: one mark per layer and network" marks "$tmp/out/stable_rank.svg" 12
check "no temporary files left" bash -c "! ls -A '$tmp/out' | grep -q '^\.'"

failed_export() {
    touch "$tmp/plainfile"
    "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/plainfile/sub" >"$tmp/o" 2>"$tmp/e"
    local status=$?
    [ $status -eq 1 ] && [ ! -s "$tmp/o" ] && grep -q "cannot create the directory: Not a directory" "$tmp/e"
}
check "a failed export says why, exits 1, prints no JSON" failed_export

all_or_nothing() {
    mkdir -p "$tmp/half"
    mkdir "$tmp/half/stable_rank.svg" # the last rename must fail
    "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/half" >/dev/null 2>"$tmp/e"
    [ $? -eq 1 ] && grep -q "cannot rename stable_rank.svg" "$tmp/e" &&
        [ "$(ls -A "$tmp/half")" = "stable_rank.svg" ]
}
check "all or nothing: one failing file leaves no other file" all_or_nothing

finish
