#!/bin/bash
# The shipped presets (README, Presets): every file in presets/ and presets/tour/
# has a header comment, sets every setting once, runs in batch mode to a valid document
# whose config is the file's, and a few of the claims the headers make hold. Malformed
# presets (a key set twice, an unknown key) are refused with FILE:LINE and exit 2.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

presets=(presets/*.preset presets/tour/*.preset)
tour=(presets/tour/*.preset)
json() { # preset path -> its document
    local name=${1//\//_}
    echo "$tmp/${name%.preset}.json"
}

check "presets/ ships presets (${#presets[@]} files)" test -f "${presets[0]}" -a "${#presets[@]}" -ge 30
tour_numbered() {
    local n=${#tour[@]} i=1 f
    # Nine steps of rank collapse, then two of entropy collapse (issue 24).
    if [ "$n" -lt 6 ] || [ "$n" -gt 11 ]; then
        echo "  $n tour steps, expected 6-11"
        return 1
    fi
    for f in "${tour[@]}"; do
        [[ $(basename "$f") =~ ^$(printf '%02d' $i)-[a-z0-9-]+\.preset$ ]] ||
            { echo "  $f: expected $(printf '%02d' $i)-name.preset"; return 1; }
        i=$((i + 1))
    done
}
check "the tour has 6-11 steps named 01-name.preset, 02-..., in order" tour_numbered

# Run every preset once, two at a time (each is meant to take at most a few seconds); one
# BLAS thread each, so that the two runs do not fight over the cores.  A real architecture at
# its own width says "# Cost: about N min" in its header: it runs only with
# ATTNSCOPE_SLOW_PRESETS=1 (its -small variant always runs).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
costly() { [ -z "${ATTNSCOPE_SLOW_PRESETS:-}" ] && grep -q '^# Cost: ' "$1"; }
run_one() {
    local out
    out=$(json "$1")
    costly "$1" && return
    "$BIN" --batch --preset "$1" >"$out" 2>"$out.err"
    echo $? >"$out.rc"
}
started=$SECONDS
running=0
for f in "${presets[@]}"; do
    run_one "$f" &
    running=$((running + 1))
    if [ $running -ge 2 ]; then
        wait -n 2>/dev/null || true
        running=$((running - 1))
    fi
done
wait
echo "# ran ${#presets[@]} presets in $((SECONDS - started)) s"

header() { # preset: a title line, then Shows/Source/(Look for|Point at)/Measured in the header
    "$PY" - "$1" <<'PY'
import re, sys
path = sys.argv[1]
def fail(kind, value, tb):
    print(f"  {path}: {value}")
    sys.exit(1)
sys.excepthook = fail
lines = open(path, encoding="utf-8").read().splitlines()
assert lines and re.match(r"# \S", lines[0]), "the first line is not '# Title'"
head = []
for line in lines:
    if line.strip() and not line.startswith("#"):
        break
    head.append(line)
text = "\n".join(head)
tour = "/tour/" in path
for label in ("Shows:", "Source:", "Measured", "Point at:" if tour else "Look for:"):
    assert "# " + label in text, f"the header lacks '{label}'"
measured = text[text.index("# Measured"):]
assert "seed" in measured.split("\n")[0], "the Measured line does not name the seed"
keys = [l.split("=")[0].strip() for l in lines[len(head):] if l.strip() and not l.startswith("#")]
every = ["tokens", "width", "depth", "sigma-qk", "attention", "mask", "window", "gap",
         "layernorm", "skip", "layer", "seed", "seeds"]
# The transformer block's settings are optional: a preset of today's layer leaves them at
# their defaults.
block = ["heads", "head", "kv-heads", "head-dim", "wo", "logit-scale", "ln-place", "ln-scale", "ln-eps",
         "norm-gain-offset",
         "qk-norm", "qk-norm-place", "rope", "rope-theta", "rope-local-base-freq", "rope-fraction",
         "rope-scaling",
         "rope-factor", "rope-low-freq-factor", "rope-high-freq-factor", "rope-original-context",
         "nope-every",
         "logit-softcap", "sink", "sink-std", "window-layers", "mlp-hidden", "skip-gain",
         "branch-gain", "mlp", "mlp-ratio", "init", "input-norm", "init-alpha", "init-beta", "init-c",
         "init-vo-alpha", "init-vo-beta", "init-query", "init-key", "init-value", "init-output",
         "init-mlp", "init-std", "depth-scale", "input", "vocab", "positions"]
assert len(keys) == len(set(keys)), f"settings {keys}: one set twice"
assert set(every) <= set(keys) <= set(every + block), f"settings {keys}: each of {every} once, and only {block} besides"
PY
}

runs() { # preset: exit 0, a document following the contract, and the file's settings
    local out
    out=$(json "$1")
    [ "$(cat "$out.rc")" = 0 ] || { echo "  exit $(cat "$out.rc"): $(cat "$out.err")"; return 1; }
    read -r T depth < <("$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; print(c["T"], c["depth"])' "$out") ||
        return 1
    "$PY" tests/cli/contract.py "$T" "$depth" <"$out" || return 1
    "$PY" - "$1" "$out" <<'PY'
import json, sys
preset, out = sys.argv[1:3]
config = json.load(open(out))["config"]
field = {"tokens": "T", "width": "d"}
for line in open(preset, encoding="utf-8"):
    line = line.split("#")[0].strip()
    if not line:
        continue
    key, value = (s.strip() for s in line.split("=", 1))
    got = config[field.get(key, key.replace("-", "_"))]
    numbers = ("sigma-qk", "skip-gain", "branch-gain", "init-alpha", "init-beta", "init-c",
               "init-vo-alpha", "init-vo-beta", "init-std", "ln-eps", "rope-theta",
               "rope-local-base-freq", "rope-fraction", "rope-factor", "rope-low-freq-factor", "rope-high-freq-factor",
               "logit-softcap", "sink", "sink-std")
    want = float(value) if key in numbers else (int(value) if value.isdigit() else value)
    assert got == want, f"{key} = {value} in the file, {got} in the document"
PY
}

# The README's table of the Mind the Gap authors' configurations: 25 entries, each a preset
# that ships.
configs_table() {
    local names n=0 name
    names=$(sed -n '/^| configs.py | preset |/,/^$/p' README.md | grep -o '`[a-z0-9-]*`' | tr -d '`')
    for name in $names; do
        [ -f "presets/$name.preset" ] || { echo "  presets/$name.preset is missing"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -eq 25 ] || { echo "  $n presets in the table, configs.py has 25 entries"; return 1; }
}
check "every configs.py entry of the README's table is a shipped preset (25)" configs_table

for f in "${presets[@]}"; do
    check "$f has a header" header "$f"
    if costly "$f"; then
        skip "$f runs in batch mode" "$(grep -m1 '^# Cost: ' "$f" | cut -c9-)"
    else
        check "$f runs in batch mode: a valid document with the file's settings" runs "$f"
    fi
done

claim() { # description, python code with d (the document), T, eig, mod, sv, pair(...)
    local what=$1 code=$2
    shift 2
    check "$what" "$PY" - "$tmp" "$code" <<'PY'
import json, math, os, sys
tmp, code = sys.argv[1:3]
def doc(preset):
    return json.load(open(os.path.join(tmp, preset.replace("/", "_")[:-len(".preset")] + ".json")))
ns = {"doc": doc, "math": math}
try:
    exec(code, ns)
except Exception as e:  # a failed assertion, or a document that did not parse
    print(f"  claim failed: {type(e).__name__}: {e}")
    sys.exit(1)
PY
}

claim "fig1-softmax: outlier at 1; sr after one layer ~1, with the gap removed > 0.03 T" '
d = doc("presets/fig1-softmax.preset"); T = d["config"]["T"]
assert abs(d["eigenvalues"][0][0] - 1) < 1e-9 and d["eigenvalues"][0][1] == 0, d["eigenvalues"][0]
assert math.hypot(*d["eigenvalues"][1]) < 0.15, d["eigenvalues"][1]
assert d["stable_rank"][1] < 1.1 and d["counterpart_stable_rank"][1] > 0.03 * T, (d["stable_rank"], d["counterpart_stable_rank"])'

claim "fig1-markov: circular law radius sigma = 1, quartercircle edge 2, s1 - 1 ~ 1/(2T)" '
d = doc("presets/fig1-markov.preset"); T = d["config"]["T"]; r = math.sqrt(T)
assert abs(d["sigma"] - 1) < 1e-6, d["sigma"]
assert 0.9 < r * math.hypot(*d["eigenvalues"][1]) < 1.1, d["eigenvalues"][1]
assert 1.9 < r * d["singular_values"][1] < 2.1, d["singular_values"][1]
assert 0.5 < (d["singular_values"][0] - 1) * 2 * T < 1.5, d["singular_values"][0]'

claim "fig1-relu and fig1-sigmoid: outliers near sigma_qk^2/sqrt(2 pi) and e^(1/2)" '
relu, sig = doc("presets/fig1-relu.preset"), doc("presets/fig1-sigmoid.preset")
assert abs(relu["eigenvalues"][0][0] / (1 / math.sqrt(2 * math.pi)) - 1) < 0.05, relu["eigenvalues"][0]
assert abs(sig["eigenvalues"][0][0] / math.exp(0.5) - 1) < 0.03, sig["eigenvalues"][0]'

claim "fig1-linear: no outlier (s1/s2 < 1.2)" '
sv = doc("presets/fig1-linear.preset")["singular_values"]
assert sv[0] / sv[1] < 1.2, sv[:2]'

claim "tour 01 -> 02: removing the gap drops the outlier and lifts sr after layer 1 from ~1 to > 0.03 T" '
a, b = doc("presets/tour/01-one-matrix-has-a-gap.preset"), doc("presets/tour/02-remove-the-gap.preset")
T = a["config"]["T"]
assert abs(a["eigenvalues"][0][0] - 1) < 1e-9, a["eigenvalues"][0]
assert max(math.hypot(*e) for e in b["eigenvalues"]) < 0.2, b["eigenvalues"][0]
assert a["stable_rank"][1] < 1.1 and b["stable_rank"][1] > 0.03 * T, (a["stable_rank"][1], b["stable_rank"][1])
assert b["stable_rank"] == a["counterpart_stable_rank"], "same weights, gap toggled"
assert b["stable_rank"][2] < 0.5 * b["stable_rank"][1], "deeper layers still collapse"'

claim "causal and window-causal masks: eigenvalues_exact, all imaginary parts 0, lambda_1 = A_11 = 1" '
for p in ("presets/tour/05-causal-mask.preset", "presets/masks-causal.preset", "presets/masks-window-causal.preset"):
    d = doc(p)
    assert d["eigenvalues_exact"] is True, p
    assert all(e[1] == 0 for e in d["eigenvalues"]), p
    assert d["eigenvalues"][0] == [1, 0], (p, d["eigenvalues"][0])'

claim "masks-window: no spectral gap (|lambda_2| > 0.99)" '
d = doc("presets/masks-window.preset")
assert math.hypot(*d["eigenvalues"][1]) > 0.99, d["eigenvalues"][1]'

claim "masks (docs/guide.md, Masks): the full mask merges the tokens (mu < 1e-10 at layer 4, round-off: null from layer 5), causal 0.014 at layer 12, the windows keep mu > 0.97" '
mu = lambda p: doc(p)["token_similarity"]
full = mu("presets/masks-full.preset")
assert full[4] < 1e-10 and all(m is None for m in full[5:]), full
assert any("round-off" in w for w in doc("presets/masks-full.preset")["warnings"])
assert round(mu("presets/masks-causal.preset")[12], 3) == 0.014, mu("presets/masks-causal.preset")
assert min(mu("presets/masks-window.preset")) > 0.97 and min(mu("presets/masks-window-causal.preset")) > 0.97'

claim "identity: sr(Sigma_1)/T near 0.125 at gamma = 1 (measured mean and theory)" '
d = doc("presets/identity.preset"); T = d["config"]["T"]
assert abs(d["stable_rank_mean"][1] / T - 0.125) < 0.02, d["stable_rank_mean"][1] / T
assert abs(d["theory"]["stable_rank"][1] / T - 0.125) < 1e-9, d["theory"]["stable_rank"]
assert d["stable_rank_mean"][-1] < 0.25 * d["stable_rank_mean"][1], "collapse in depth"'

claim "fig6-layers: extra outliers at the shown layer (>= 3 with |lambda| > 0.5)" '
d = doc("presets/fig6-layers.preset")
assert sum(math.hypot(*e) > 0.5 for e in d["eigenvalues"]) >= 3, d["eigenvalues"][:4]'

claim "depth grid: each pair shares its weights (one curve is the other one's ghost), the fix lifts layer 1" '
import itertools
for fam, arch in itertools.product(("markov", "softmax-xavier"), ("", "-ln", "-skip", "-skip-ln", "-scaled-skip")):
    base = f"presets/depth-{fam}{arch}.preset"
    off, on = doc(base), doc(base[:-len(".preset")] + "-gap.preset")
    assert off["config"]["gap"] == "off" and on["config"]["gap"] == "center", base
    assert on["stable_rank"] == off["counterpart_stable_rank"], base
    assert off["stable_rank"] == on["counterpart_stable_rank"], base
    assert on["stable_rank_mean"][1] > 3 * off["stable_rank_mean"][1], (base, on["stable_rank_mean"][1], off["stable_rank_mean"][1])'

claim "depth-markov-gap follows theory at layer 1 (C_1 T = 16.86, within 20%)" '
d = doc("presets/depth-markov-gap.preset")
assert abs(d["theory"]["stable_rank"][1] - 16.855967) < 1e-3, d["theory"]["stable_rank"][1]
assert abs(d["stable_rank_mean"][1] / d["theory"]["stable_rank"][1] - 1) < 0.2, d["stable_rank_mean"][1]'

claim "depth-softmax-xavier-gap: exactly 0 after layer 2, stable rank null, and a warning says so" '
d = doc("presets/depth-softmax-xavier-gap.preset")
assert d["stable_rank"][2] is not None and all(v is None for v in d["stable_rank"][3:]), d["stable_rank"]
assert any("exactly 0" in w for w in d["warnings"]), d["warnings"]'

claim "tour 09: scaled skip + LN + gap removal keeps > 0.2 T after 12 layers; its ghost collapses" '
d = doc("presets/tour/09-keep-the-rank.preset"); T = d["config"]["T"]
assert d["stable_rank"][12] > 0.2 * T and d["counterpart_stable_rank"][12] < 1.05, (d["stable_rank"][12], d["counterpart_stable_rank"][12])'

# The second failure mode (tour 10, 11): sigma_qk = 2.5 condenses every layer's rows (mean
# H under a quarter of ln T, most of each row's weight on one key, the entropy-collapse side
# of beta_c); QK-norm on the same network brings them back (H/ln T above 0.85, the largest
# weight under 0.1, logit std ~1), as the steps' notes say.
claim "tour 10: sigma_qk 2.5 collapses the entropy at every layer, on the entropy-collapse side" '
d = doc("presets/tour/10-entropy-collapse.preset"); L = d["config"]["depth"]
h, top = d["attention_entropy"]["normalised_mean"], d["max_attention_mean"]
assert all(h[l] < 0.25 and top[l] > 0.5 for l in range(1, L + 1)), (h, top)
assert d["attention_phase"]["side"][1:] == ["entropy-collapse"] * L, d["attention_phase"]
assert d["attention_entropy_theory"]["mean"] is None and d["logit_std"] > d["attention_entropy_theory"]["critical_logit_std"]'
claim "tour 11: QK-norm on the same network takes it back, every layer" '
d = doc("presets/tour/11-entropy-qk-norm.preset"); L = d["config"]["depth"]
c = doc("presets/tour/10-entropy-collapse.preset")
h, top = d["attention_entropy"]["normalised_mean"], d["max_attention_mean"]
assert all(h[l] > 0.85 and top[l] < 0.1 for l in range(1, L + 1)), (h, top)
assert abs(d["logit_std"] - 1) < 0.05, d["logit_std"]
assert {k: v for k, v in d["config"].items() if k != "qk_norm"} == {k: v for k, v in c["config"].items() if k != "qk_norm"}
assert d["attention_phase"]["beta"] is None and "QK-norm" in d["attention_phase"]["note"]'
by_step_name() { # a tour step by its name without its number, as the brief names them
    "$BIN" --batch --preset entropy-qk-norm >"$tmp/named.json" &&
        "$BIN" --batch --preset presets/tour/11-entropy-qk-norm.preset >"$tmp/path.json" &&
        cmp -s "$tmp/named.json" "$tmp/path.json"
}
check "a tour step by its name alone: --preset entropy-qk-norm" by_step_name

overridden() {
    "$BIN" --batch --preset presets/fig1-softmax.preset -T 32 -d 48 >"$tmp/o.json" &&
        "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; assert (c["T"], c["d"], c["depth"]) == (32, 48, 1), c' "$tmp/o.json"
}
check "options after --preset override it, the rest stays" overridden

refused() { ends_saying 2 "${@:2}" -- "$BIN" --batch --preset "$1"; } # file, expected-stderr-fragment...
printf '# a key twice\ntokens = 64\nwidth = 64\n\ntokens = 32\n' >"$tmp/twice.preset"
check "a key set twice: FILE:LINE, exit 2, nothing on stdout" refused "$tmp/twice.preset" "$tmp/twice.preset:5:" "duplicate key 'tokens'"
printf 'tokens = 64\ncolour = red   # not a setting\n' >"$tmp/unknown.preset"
check "an unknown key: FILE:LINE, exit 2, nothing on stdout" refused "$tmp/unknown.preset" "$tmp/unknown.preset:2:" "unknown key 'colour'"
cp presets/tour/01-one-matrix-has-a-gap.preset "$tmp/edited.preset"
echo "seed = 2" >>"$tmp/edited.preset"
lines=$(wc -l <"$tmp/edited.preset")
check "a shipped preset with a second 'seed' line is refused at that line" refused "$tmp/edited.preset" "$tmp/edited.preset:$lines:" "duplicate key 'seed'"

finish
