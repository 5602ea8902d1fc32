#!/bin/bash
# Numerical edges (issue 5): each gives finite, valid JSON or a clear refusal, never a crash
# or a NaN.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

document() { # python-assertions args...
    local assertions=$1
    shift
    "$BIN" --batch "$@" >"$tmp/out.json" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
    "$PY" -c "
import json, math, sys
d = json.load(open('$tmp/out.json'), parse_constant=lambda t: sys.exit('non-JSON number ' + t))
T = d['config']['T']
$assertions
"
}

check "sigma_qk = 1e-6: uniform attention, eigenvalues {1, 0, ...}" document '
assert abs(d["eigenvalues"][0][0] - 1) < 1e-9 and all(math.hypot(*e) < 1e-9 for e in d["eigenvalues"][1:])
assert abs(d["sigma"] - 1e-12) < 1e-15' -T 32 -d 32 -L 2 -s 1e-6

check "sigma_qk = 1e-6, causal: eigenvalues 1, 1/2, ..., 1/T" document '
assert all(abs(e[0] - 1 / (i + 1)) < 1e-9 and e[1] == 0 for i, e in enumerate(d["eigenvalues"]))
assert d["eigenvalues_exact"] is True' -T 16 -d 16 -L 1 -s 1e-6 -m causal

check "sigma_qk = 4: one-hot softmax rows stay finite" document '
assert all(v is not None for v in d["singular_values"])
assert abs(d["eigenvalues"][0][0] - 1) < 1e-9
assert d["sigma"] > 1e50' -T 32 -d 32 -L 2 -s 4

check "T = 2, d = 2" document '
assert len(d["eigenvalues"]) == 2 and abs(d["stable_rank"][0] - 2) < 1e-12' -T 2 -d 2 -L 3

refused() { ends_saying 2 "needs T <= d" -- "$BIN" --batch -T 2 -d 1; }
check "d = 1 with T = 2 > d refused" refused

check "depth 256 without LayerNorm: overflow reported as null" document '
assert d["stable_rank"][-1] is None
assert any("overflows the double range" in w for w in d["warnings"])' -T 16 -d 64 -L 256 -s 2

check "depth 256 markov: finite throughout" document '
assert all(v is not None for v in d["stable_rank"] + d["log10_norm"])' -T 16 -d 64 -L 256 -a markov

check "causal + deflate: pi = e1, eigenvalues exact" document '
assert d["shown_gap"] == "deflate" and d["eigenvalues_exact"] is True
assert all(e[1] == 0 for e in d["eigenvalues"])' -T 24 -d 24 -L 2 -m causal -g deflate

check "uniform + center: A-perp = 0, stable rank null" document '
assert d["stable_rank"][1] is None and all(s == 0 for s in d["singular_values"])' -T 16 -d 16 -L 2 -a uniform -g center

# Identity has no outlier (every singular-value gap is 0): nothing is removed, and the
# network equals gap off's, with a warning (docs/model.md §1.4).
check "identity + outliers: nothing removed, finite, said" document '
assert d["outliers_removed"] == 0
assert all(v is not None for v in d["counterpart_stable_rank"])
assert any("no outlier" in w for w in d["warnings"])' -T 16 -d 16 -L 2 -a identity -g outliers

check "linear attention, deep: overflow reported, no NaN" document '
assert any("overflows" in w for w in d["warnings"])' -T 16 -d 16 -L 40 -a linear -s 2

check "linear + outliers: the attention overflows before the tokens; reported, no LAPACK failure" document '
assert any("attention matrix overflows the double range at layer 6" in w for w in d["warnings"])
assert d["stable_rank"][5] is not None and d["stable_rank"][6] is None' -T 64 -d 64 -L 8 -a linear -g outliers

check "a shown layer past the overflow has no spectra: null, with the reason" document '
assert d["eigenvalues"] is None and d["singular_values"] is None
assert all(v is None for v in d["readouts"].values())
assert any("layer 7 has no spectra" in w for w in d["warnings"])' -T 64 -d 64 -L 8 -a linear -l 7

check "relu + deflate falls back to center with a warning" document '
assert d["shown_gap"] == "center" and any("fell back to center" in w for w in d["warnings"])' -T 16 -d 16 -L 1 -a relu -g deflate

check "the deflate fallback names the first layer it happened at, once" document '
fell = [w for w in d["warnings"] if "fell back to center" in w]
assert len(fell) == 1 and fell[0].endswith("(from layer 1)"), fell' -T 16 -d 16 -L 3 -a relu -g deflate

# Every kind x mask x gap mode at the extremes of sigma_qk and at T = 2, with LayerNorm
# and skip cycling through their modes: a valid document (no NaN or Infinity) each time.
# One BLAS thread per run and one Python for all the documents keep 560 runs quick.
valid_documents() { # manifest: "T file label" lines
    "$PY" - "$1" <<'PY'
import io, runpy, sys
bad = 0
for line in open(sys.argv[1]):
    T, path, label = line.rstrip("\n").split(" ", 2)
    sys.argv, sys.stdin, sys.stderr = ["contract.py", T, "3"], open(path), io.StringIO()
    try:
        runpy.run_path("tests/cli/contract.py")
    except SystemExit:
        bad += 1
        print(f"  {label}: {sys.stderr.getvalue().strip()}", file=sys.stdout)
    sys.stderr = sys.__stderr__
sys.exit(1 if bad else 0)
PY
}
lns=(none rms ln)
skips=(none plain scaled)
for sigma in 1e-6 4; do
    for size in "2 2" "6 8"; do
        read -r T d <<<"$size"
        i=0 bad=""
        : >"$tmp/manifest"
        for kind in softmax markov relu sigmoid linear uniform identity; do
            for mask in full causal window window-causal; do
                for gap in off center uniform deflate outliers; do
                    i=$((i + 1))
                    if ! OPENBLAS_NUM_THREADS=1 "$BIN" --batch -T "$T" -d "$d" -L 3 -s "$sigma" -a "$kind" \
                        -m "$mask" -g "$gap" -n "${lns[i % 3]}" -k "${skips[i / 3 % 3]}" >"$tmp/doc$i.json" 2>"$tmp/err"; then
                        bad="$kind/$mask/$gap: $(cat "$tmp/err")"
                        break 3
                    fi
                    echo "$T $tmp/doc$i.json $kind/$mask/$gap" >>"$tmp/manifest"
                done
            done
        done
        [ -z "$bad" ] && ! valid_documents "$tmp/manifest" >"$tmp/why" && bad=$(cat "$tmp/why")
        if [ -z "$bad" ]; then
            ok "sigma_qk = $sigma, T = $T, d = $d: every kind, mask and gap mode gives a valid document"
        else
            not_ok "sigma_qk = $sigma, T = $T, d = $d: $bad"
        fi
    done
done

check "window as wide as allowed (w = T - 1)" document '
assert abs(d["eigenvalues"][0][0] - 1) < 1e-9' -T 16 -d 16 -L 1 -m window -w 15

finish
