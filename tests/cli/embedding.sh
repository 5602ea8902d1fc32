#!/bin/bash
# The embedding input and the codebases' initialisation in --batch (docs/model.md §1.1,
# §1.10): more tokens than dimensions run (T > d), and every readout keeps its contract;
# the input's stable rank is at most its rank d, and 1 when one id repeats (V = 1); sigma
# and the stable-rank curves built on orthonormal rows are withdrawn with the reason (markov
# attention, which ignores the rows, keeps sigma); the orthonormal input still refuses T > d,
# naming the way out; the conditioning, the T sweep and the export run at T > d; and the new
# settings travel through --jsonl and presets as every setting does.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

runs() { valid_document "$1" "$2" "$3" -T "$2" -L "$3" "${@:4}"; } # name T depth args...: exit 0 and a valid document

says() { # name script: Python over the document, asserting
    "$PY" - "$tmp/$1.json" <<PY
import json, math, sys
doc = json.load(open(sys.argv[1]))
T, d = doc["config"]["T"], doc["config"]["d"]
$2
PY
}

check "T = 96 > d = 16, embedding input, gpt2: runs" \
    runs wide 96 3 -d 16 --input embedding --init gpt2 --wo gaussian --mlp gelu -k plain -n ln --ln-place pre
check "sr(X0) <= d (rank <= d < T), and above 1" says wide '
assert 1 < doc["stable_rank"][0] <= d * (1 + 1e-12), doc["stable_rank"][0]'
check "T = 48 > d = 16, softmax, no skip or LN: runs" runs plain 48 3 -d 16 --input embedding
check "sigma null, the warning says why, no theory curve" says plain '
assert doc["sigma"] is None
assert any(w.startswith("embedding input (V = 50257, S = 0.25)") and "orthonormal rows" in w
           for w in doc["warnings"]), doc["warnings"]
th = doc["theory"]
assert th["sigma"] is None and th["circle_radius"] is None and th["outlier"] == 1, th
assert th["stable_rank"] is None and "orthonormal rows" in th["note"], th'

check "V = 1: every row the same id, sr(X0) = 1" runs one 40 2 -d 8 --input embedding --vocab 1
# Equal tokens: sr − 1 is round-off, so null (docs/model.md §2, "Round-off from a layer on").
check "V = 1: sr(X0) - 1 is round-off: null, sr = 1" says one '
assert doc["stable_rank_minus_one"][0] is None and doc["stable_rank"][0] == 1, doc'

check "markov attention ignores the rows: sigma stays" runs markov 48 2 -d 16 -a markov --input embedding
check "markov: sigma numeric, the stable-rank curve withdrawn" says markov '
assert isinstance(doc["sigma"], float)
assert any(w.startswith("embedding input") and w.endswith("no stable-rank curve") for w in doc["warnings"])'

check "trunc-normal, per-layer depth scale, T > d: runs" \
    runs olmo 64 3 -d 32 --input embedding --init trunc-normal --depth-scale per-layer --wo gaussian --mlp swiglu -k plain -n rms --ln-place pre --ln-scale sqrt-d

refuses() { refused_running "$BIN" --batch -- "$1" -- "${@:2}"; } # what-the-message-says args...
check "orthonormal input at T > d: exit 2, naming --input embedding" \
    refuses "or choose --input embedding" -T 32 -d 16
check "--input other: exit 2 with the names" refuses "accepted orthonormal|embedding" --input other
check "--init-std 0: exit 2" refuses "init-std '0': accepted a number 0 < X <= 4" --init-std 0
check "--vocab 0: exit 2" refuses "vocab '0': accepted a whole number 1..16777216" --vocab 0

conditioning() {
    "$BIN" --batch --conditioning -T 24 -d 8 -L 2 --input embedding --vocab 5 >"$tmp/cond.json" 2>"$tmp/err" || {
        echo "  exit $?: $(head -c 300 "$tmp/err")"
        return 1
    }
    "$PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["conditioning"]
assert doc["config"]["T"] == 24 and doc["config"]["d"] == 8
assert len(c["kappa_value_output"]) == 2 and all(k >= 1 for k in c["kappa_value_output"]), c
# Repeated ids (V = 5 < T) give equal query rows, so equal rows of A: A is singular.
assert c["kappa_attention"] == [None, None], c["kappa_attention"]' "$tmp/cond.json"
}
check "the conditioning at T = 24 > d = 8" conditioning

sweep_and_export() {
    "$BIN" --batch --sweep-T --export "$tmp/export" -T 64 -d 16 -L 2 --input embedding >"$tmp/sweep.json" 2>"$tmp/err" || {
        echo "  exit $?: $(head -c 300 "$tmp/err")"
        return 1
    }
    [ -s "$tmp/export/layers.csv" ] && head -1 "$tmp/export/layers.csv" | grep -q . &&
        "$PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
sweep, layer = doc["width_sweep"], doc["config"]["layer"]
# Its last point is this very configuration (T = 64 at d = 16, not d = T), and the markov law
# of the slope, derived from orthonormal rows, is not claimed.
assert sweep["T"][-1] == 64, sweep
want = doc["stable_rank_minus_one"][layer]
assert abs(sweep["stable_rank_minus_one"][-1] - want) <= 1e-12 * want, (sweep, want)
assert sweep["theory_slope"] is None' "$tmp/sweep.json"
}
check "the T sweep (at the same T/d = 4) and the export at T = 64 > d = 16" sweep_and_export
markov_sweep() {
    "$BIN" --batch --sweep-T -a markov -T 64 -d 16 -L 2 --input embedding >"$tmp/msweep.json" 2>"$tmp/err" &&
        "$PY" -c '
import json, sys
assert json.load(open(sys.argv[1]))["width_sweep"]["theory_slope"] is None' "$tmp/msweep.json"
}
check "markov's sweep on embedding rows claims no slope (its law starts from orthonormal rows)" markov_sweep

jsonl() {
    printf '%s\n' '{"input": "embedding", "T": 40, "d": 8, "vocab": 3, "init": "trunc-normal", "init_std": 0.05, "depth_scale": "total", "positions": "learned"}' |
        "$BIN" --batch --jsonl -L 2 >"$tmp/jsonl.out" 2>"$tmp/err" || {
        echo "  exit $?: $(head -c 300 "$tmp/err")"
        return 1
    }
    "$PY" -c '
import json, sys
doc = json.loads(open(sys.argv[1]).readline())
doc = doc.get("result", doc)
c = doc["config"]
assert (c["input"], c["vocab"], c["init"], c["init_std"], c["depth_scale"], c["positions"]) == (
    "embedding", 3, "trunc-normal", 0.05, "total", "learned"), c' "$tmp/jsonl.out"
}
check "--jsonl takes input, vocab, init_std, depth_scale, positions" jsonl
finish
