#!/bin/bash
# The batch contract (README, Batch mode): valid JSON of the right shape for every attention
# kind, mask and gap mode; bit-identical for the same seed; errors exit 2 with nothing on
# stdout; --help and --version.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

contract() { valid_document out "$@"; } # T depth args...

check "defaults follow the contract" contract 256 8
check "-T 64 -d 64 -L 3" contract 64 3 -T 64 -d 64 -L 3

for kind in softmax markov relu sigmoid linear uniform identity; do
    for mask in full causal window window-causal; do
        for gap in off center uniform deflate outliers; do
            if ! contract 8 2 -T 8 -d 12 -L 2 -a "$kind" -m "$mask" -w 2 -g "$gap" -n rms; then
                not_ok "$kind/$mask/$gap: $(cat "$tmp/out.err")"
                continue 3
            fi
        done
    done
    ok "$kind: every mask and gap mode gives a valid document"
done
# Sinks (rows below 1, entropy over T + 1 outcomes) and per-layer windows, every mask and gap.
for mask in full causal window window-causal; do
    for gap in off center uniform deflate outliers; do
        if ! contract 8 4 -T 8 -d 12 -L 4 -m "$mask" -w 2 -g "$gap" --sink 0.5 --sink-std 0.5 \
            --heads 2 --window-layers 1:1; then
            not_ok "sinks, windows 1:1, $mask/$gap: $(cat "$tmp/out.err")"
            continue 2
        fi
    done
    ok "sinks and window layers 1:1, $mask: every gap mode gives a valid document"
done

"$BIN" --batch -T 32 -d 40 -L 4 --seeds 3 >"$tmp/a.json"
"$BIN" --batch -T 32 -d 40 -L 4 --seeds 3 >"$tmp/b.json"
check "same seed, same bytes" cmp -s "$tmp/a.json" "$tmp/b.json"
"$BIN" --batch -T 32 -d 40 -L 4 --seed 2 >"$tmp/c.json"
check "another seed, other numbers" bash -c "! cmp -s '$tmp/a.json' '$tmp/c.json'"

prefix_equal() {
    "$BIN" --batch -T 32 -d 32 -L 8 >"$tmp/d8.json"
    "$BIN" --batch -T 32 -d 32 -L 9 >"$tmp/d9.json"
    "$PY" - "$tmp/d8.json" "$tmp/d9.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("stable_rank", "counterpart_stable_rank", "stable_rank_minus_one"):
    assert a[key] == b[key][:9], key
assert a["eigenvalues"] == b["eigenvalues"]
PY
}
check "depth 9 keeps layers 0..8 of depth 8 exactly" prefix_equal

nulls_for_undefined() {
    "$BIN" --batch -T 16 -d 16 -L 2 -a uniform -g center >"$tmp/u.json" &&
        "$PY" - "$tmp/u.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stable_rank"][1] is None and d["stable_rank"][2] is None, d["stable_rank"]
assert d["counterpart_stable_rank"][1] == 1.0
assert any("undefined" in w for w in d["warnings"]), d["warnings"]
PY
}
check "uniform + center: stable rank null with a warning" nulls_for_undefined

theory_and_sweep() {
    "$BIN" --batch -a markov -T 64 -d 128 -L 2 --sweep-T >"$tmp/s.json" && "$PY" - "$tmp/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
th = d["theory"]
assert abs(th["sigma"] - d["sigma"]) < 1e-15 and th["singular_law"] == "quartercircle", th
assert len(th["stable_rank"]) == 3 and th["stable_rank"][0] == 64, th
w = d["width_sweep"]
assert w["T"] == [16, 32, 64], w
assert len(w["stable_rank_minus_one"]) == 3 and len(w["stable_rank_minus_one_gap"]) == 3
assert w["theory_slope"] == -1, w
PY
}
check "theory and --sweep-T fields" theory_and_sweep

# The sweep's fitted slopes, against numpy's polyfit of log(sr − 1) on log T over the points
# docs/model.md §3 calls resolved (sr − 1 >= 1e-50; below, the value is X's own rounding),
# null with fewer than two.  At -T 8 -d 16 -L 3 the gap-removed T = 2 point reads ~1e-64 (a
# fit through it gave 104); at -T 4 it leaves one point, so slope_gap is null.  The sweep
# starts at T = 2 below T = 16, at 16 from there.
sweep_fits_numpy() {
    local i=0 args
    for args in "-T 8 -d 16 -L 3" "-T 4 -d 8 -L 3" "-a markov -T 64 -d 128 -L 2" \
        "-T 64 -d 64 -L 3 --seeds 2"; do
        # shellcheck disable=SC2086
        "$BIN" --batch $args --sweep-T >"$tmp/fit$i.json" || { echo "  $args: exit $?"; return 1; }
        i=$((i + 1))
    done
    /usr/bin/python3 - "$tmp"/fit[0-3].json <<'PY'
import json, math, sys
import numpy as np
RESOLVED = 1e-50  # docs/model.md §3, the width sweep's fit
left_out = nulls = 0
for path in sys.argv[1:]:
    w = json.load(open(path))["width_sweep"]
    t = w["T"]
    assert t[0] == (2 if t[-1] < 16 else 16) and all(b == 2 * a for a, b in zip(t, t[1:-1])), t
    for key, points in (("slope", "stable_rank_minus_one"), ("slope_gap", "stable_rank_minus_one_gap")):
        kept = [(x, y) for x, y in zip(t, w[points]) if y is not None and math.isfinite(y) and y >= RESOLVED]
        left_out += len(t) - len(kept)
        if len(kept) < 2:
            nulls += 1
            assert w[key] is None, (path, key, w)
            continue
        x, y = np.log(np.array(kept, dtype=float).T)
        expected = np.polyfit(x, y, 1)[0]
        assert w[key] is not None and abs(w[key] - expected) <= 1e-9 * max(1, abs(expected)), (path, key, w[key], expected)
assert left_out >= 2 and nulls >= 1, (left_out, nulls)
PY
}
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    check "--sweep-T: the slopes are numpy's polyfit over the resolved points, null below two" \
        sweep_fits_numpy
else
    skip "--sweep-T's slopes against numpy" "Debian's python3-numpy is not installed"
fi
# The sweep's layers run in the two lanes (test_worker_lanes counts them); the document is
# byte for byte the one a single lane gives.
check "--sweep-T: two lanes give what one lane gives" bash -c \
    "OPENBLAS_NUM_THREADS=1 '$BIN' --batch -a markov -T 64 -d 128 -L 2 --sweep-T | cmp -s - '$tmp/s.json'"

no_theory_is_null() {
    "$BIN" --batch -T 16 -d 16 -L 2 -n ln >"$tmp/n.json" && "$PY" - "$tmp/n.json" <<'PY'
import json, sys
th = json.load(open(sys.argv[1]))["theory"]
assert th["stable_rank"] is None and th["counterpart_stable_rank"] is None, th
assert "LayerNorm" in th["note"], th
PY
}
check "no theory: null curves and a note" no_theory_is_null

usage_error() { refused_running "$BIN" -- "$1" -- "${@:2}"; } # expected-stderr-fragment args...
check "T > d refused" usage_error "-T/--tokens 512 exceeds -d/--width 256" --batch -T 512
check "bad sigma" usage_error "-s/--sigma-qk 'nan'" --batch -s nan
check "bad kind" usage_error "accepted softmax|markov|relu|sigmoid|linear|uniform|identity" --batch -a soft
check "unknown option" usage_error "unknown option '--bogus'" --batch --bogus
check "over the memory budget" usage_error "needs about" --batch -T 2048 -d 2048 --max-memory 64M
check "missing preset" usage_error "--preset 'nope.preset'" --batch --preset nope.preset

bad_preset() {
    printf 'tokens = 64\nwidth = many\n' >"$tmp/bad.preset"
    usage_error "$tmp/bad.preset:2: -d/--width 'many'" --batch --preset "$tmp/bad.preset"
}
check "malformed preset: FILE:LINE" bad_preset

check "--help exits 0 and lists every option" bash -c "'$BIN' --help | grep -q -- '--sigma-qk' && '$BIN' --help | grep -q -- '--seeds'"
check "--version" bash -c "'$BIN' --version | grep -qx 'attnscope 0.1.0'"

pipe_closed() {
    local out
    out=$("$BIN" --batch 2>"$tmp/pipe.err" | head -c 10)
    [ "${#out}" -eq 10 ] && [ ! -s "$tmp/pipe.err" ]
}
check "a closed pipe ends quietly" pipe_closed

# A reader gone before the first byte, deterministically: the read end is closed before the
# program starts.  It dies by SIGPIPE (status 141 in a shell), as cat and grep do, with
# nothing on stderr, also when its parent ignores SIGPIPE (else: a "Broken pipe" error).
killed_by_sigpipe() { # ignore|default args...
    local disposition=$1
    shift
    "$PY" - "$disposition" "$BIN" --batch "$@" 2>"$tmp/sigpipe.err" <<'PY'
import os, signal, subprocess, sys
disposition, argv = sys.argv[1], sys.argv[2:]
read, write = os.pipe()
os.close(read)
def child():
    if disposition == "ignore":
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
p = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, preexec_fn=child)
err = p.stderr.decode(errors="replace")
assert p.returncode == -signal.SIGPIPE, f"status {p.returncode}, stderr: {err}"
assert "--export" in argv or err == "", f"stderr: {err}"
assert "pipe" not in err.lower() and "error" not in err.lower(), f"stderr: {err}"
PY
    local status=$?
    [ $status -eq 0 ] || cat "$tmp/sigpipe.err"
    return $status
}
check "a reader gone: death by SIGPIPE, stderr empty" killed_by_sigpipe default -T 16 -d 16 -L 2
check "a reader gone, SIGPIPE ignored by the parent: the same" killed_by_sigpipe ignore -T 16 -d 16 -L 2

# --export writes its files (all or nothing, the atomic export) before the JSON goes to
# stdout: a reader gone leaves the complete set, byte for byte the files of a normal run.
export_then_pipe() {
    "$BIN" --batch -T 16 -d 16 -L 2 --export "$tmp/ref" >/dev/null 2>&1 &&
        killed_by_sigpipe default -T 16 -d 16 -L 2 --export "$tmp/exported" &&
        diff -r "$tmp/ref" "$tmp/exported" && [ "$(ls -A "$tmp/exported" | wc -l)" -eq 14 ]
}
check "--export into a closed pipe: the fourteen files complete, no temporaries" export_then_pipe

finish
