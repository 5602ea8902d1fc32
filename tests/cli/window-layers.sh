#!/bin/bash
# --window-layers: the pattern in the JSON config (shortest form), layers.csv's mask column
# per layer, the stable-rank SVG's marks on the window layers, every layer global equal to the
# global mask (every line but the config line), and bad patterns refused naming the option.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

config_value() { # file key expected
    "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1]))["config"][sys.argv[2]]; sys.exit(0 if v == sys.argv[3] else 1)' "$@"
}
"$BIN" --batch -T 12 -d 16 -L 8 -m window-causal -w 2 --window-layers LLLLLGLLLLLG >"$tmp/doc.json"
check "--window-layers: exit 0" test $? -eq 0
check "the JSON config carries the shortest form (5:1)" config_value "$tmp/doc.json" window_layers 5:1
"$BIN" --batch -T 12 -d 16 -L 2 >"$tmp/default.json"
check "the default is all" config_value "$tmp/default.json" window_layers all

"$BIN" --batch -T 12 -d 16 -L 8 -m window-causal -w 2 --window-layers 5:1 --export "$tmp/out" >/dev/null 2>&1
masks() {
    "$PY" - "$tmp/out/layers.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
want = [""] + ["window-causal"] * 5 + ["causal"] + ["window-causal"] * 2
sys.exit(0 if [r["mask"] for r in rows] == want else print([r["mask"] for r in rows]) or 1)
PY
}
check "layers.csv: each layer's mask (5 window-causal, 1 causal, repeated)" masks
local_marks() {
    local n
    n=$(grep -c 'class="local"' "$tmp/out/stable_rank.svg")
    [ "$n" -eq 7 ] || { echo "  $n marks, expected 7"; return 1; }
}
check "stable_rank.svg marks the 7 window layers" local_marks
check "stable_rank.svg names them in its legend" grep -q "window-causal layers (w = 2), others causal: 5:1" "$tmp/out/stable_rank.svg"
"$BIN" --batch -T 12 -d 16 -L 8 -m window-causal -w 2 --export "$tmp/all" >/dev/null 2>&1
check "all: no marks" test "$(grep -c 'class="local"' "$tmp/all/stable_rank.svg")" -eq 0

same_but_config() { # args-a -- args-b
    local a=() b=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    "$BIN" --batch "${a[@]}" >"$tmp/a.json" && "$BIN" --batch "${b[@]}" >"$tmp/b.json" &&
        cmp -s <(sed 2d "$tmp/a.json") <(sed 2d "$tmp/b.json")
}
check "0:1 with -m window is -m full (every line but the config)" \
    same_but_config -T 12 -d 16 -L 4 -a markov -m window -w 2 --window-layers 0:1 -- -T 12 -d 16 -L 4 -a markov -m full
check "G with -m window-causal is -m causal" \
    same_but_config -T 12 -d 16 -L 4 -k plain -n ln -m window-causal -w 3 --window-layers G -- -T 12 -d 16 -L 4 -k plain -n ln -m causal

refused() { # value: exit 2, nothing on stdout, stderr names the option, the value, what is accepted
    ends_saying 2 "--window-layers '$1': accepted all, a:b (a window layers then b global, a + b <= 48)" -- \
        "$BIN" --batch --window-layers "$1"
}
for bad in x LGX 49:1 0:0 "5: 1" lg ""; do
    check "--window-layers '$bad' refused, exit 2" refused "$bad"
done
finish
