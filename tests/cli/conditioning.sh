#!/bin/bash
# Conditioning through the real binary (docs/model.md §8): --conditioning adds one object and
# changes nothing else; its series are consistent with each other (κ(B) = κ(W_VO)κ(A), κ(K) =
# ‖K‖/s_min, K's singular values); the exact path and the matrix-free one; the cutting-skip
# initialisation; the softmax demo against its closed form; bad input for the new options.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

run() { batch_document "$tmp/$1" "${@:2}"; } # name, args...: the document in $tmp/name.json, ok when the exit status is 0

py() { # description, python code with doc(name)
    local what=$1 code=$2
    check "$what" "$PY" - "$tmp" "$code" <<'PY'
import json, math, os, sys
tmp, code = sys.argv[1:3]
def doc(name):
    return json.load(open(os.path.join(tmp, name + ".json")))
try:
    exec(code, {"doc": doc, "math": math, "os": os, "tmp": tmp})
except Exception as e:
    print(f"  {type(e).__name__}: {e}")
    sys.exit(1)
PY
}

# The runs that check the exact path pin it: the automatic choice is priced at this
# machine's rate, and a test must not depend on the machine's speed or load.
small=(-T 8 -d 16 -L 3 -m causal --conditioning-path exact)
check "plain run" run plain "${small[@]}"
check "--conditioning run" run cond "${small[@]}" --conditioning
py "--conditioning adds the conditioning object and changes nothing else" '
a, b = doc("plain"), doc("cond")
assert "conditioning" not in a
b.pop("conditioning")
assert a == b'

# The series and their relations, for both networks (the counterpart has gap removal on).
py "every series has one value per layer for both networks; kappa(B) = kappa(W_VO) kappa(A); kappa(K) = |K|/s_min(K)" '
d = doc("cond"); k = d["conditioning"]; L = d["config"]["depth"]
names = ["kappa_attention", "kappa_value_output", "kappa_dominant", "kappa_attention_product",
         "kappa_jacobian", "kappa_jacobian_lower", "kappa_jacobian_skip", "jacobian_norm", "jacobian_s_min",
         "jacobian_s_min_error", "premise_ratio"]
for prefix in ("", "counterpart_"):
    for n in names:
        assert len(k[prefix + n]) == L, (prefix + n, k[prefix + n])
    for l in range(L):
        a, w, b = (k[prefix + n][l] for n in ("kappa_attention", "kappa_value_output", "kappa_dominant"))
        if a is not None and w is not None:
            assert abs(b - a * w) <= 1e-12 * b, (prefix, l, a, w, b)
        else:
            assert b is None
        kj, norm, smin = (k[prefix + n][l] for n in ("kappa_jacobian", "jacobian_norm", "jacobian_s_min"))
        if kj is not None:
            assert abs(kj - norm / smin) <= 1e-12 * kj, (prefix, l, kj, norm, smin)
            # the exact path: its lower bound is kappa itself where kappa is resolved
            assert k[prefix + "kappa_jacobian_lower"][l] == kj, (prefix, l)
assert k["jacobian_exact"] is True and all(e == 0 for e in k["jacobian_s_min_error"])
# gap removal by centring makes every row sum 0: A - U is singular, kappa null, not huge
assert all(v is None for v in k["counterpart_kappa_attention"]), k["counterpart_kappa_attention"]'

py "the shown layer: K has T*d singular values, descending, the largest = jacobian_norm" '
d = doc("cond"); k = d["conditioning"]; s = k["shown_layer"]; c = d["config"]
sv = s["jacobian_singular_values"]
assert len(sv) == c["T"] * c["d"] and all(x >= y for x, y in zip(sv, sv[1:]))
assert sv[0] == k["jacobian_norm"][c["layer"] - 1]
assert len(s["attention_singular_values"]) == c["T"] and len(s["value_output_singular_values"]) == c["d"]
sa, sw = s["attention_singular_values"], s["value_output_singular_values"]
assert abs(k["kappa_dominant"][c["layer"] - 1] - (sa[0] / sa[-1]) * (sw[0] / sw[-1])) <= 1e-12 * k["kappa_dominant"][0]'

# The cutting-skip initialisation: W_VO = c^2 orthogonal, and the paper's point.
check "cutting-skip preset" run cs --conditioning --conditioning-path exact \
    --preset presets/skipless-cutting-skip.preset
check "gaussian preset" run gauss --conditioning --conditioning-path exact \
    --preset presets/skipless-gaussian.preset
py "cutting-skip: kappa(W_VO) = 1; kappa(K) < 10 for 8 layers where the Gaussian one is beyond double precision by layer 4" '
cs, g = doc("cs")["conditioning"], doc("gauss")["conditioning"]
assert doc("cs")["config"]["init"] == "cutting-skip" and doc("gauss")["config"]["init"] == "normal"
assert all(abs(v - 1) < 1e-12 for v in cs["kappa_value_output"]), cs["kappa_value_output"]
assert all(v is not None and v < 10 for v in cs["kappa_jacobian"][:8]), cs["kappa_jacobian"]
assert g["kappa_jacobian"][0] > 1e5 and g["kappa_jacobian"][3] is None, g["kappa_jacobian"]
assert cs["premise_ratio"][0] < 1.5, cs["premise_ratio"]
assert any("beyond double precision" in w for w in g["warnings"])'

# The Kronecker path pinned on the cutting-skip preset, where B0 is near K for its first
# layers: each certified s_min holds the exact path's within its certificate (plus the exact
# SVD's own rounding), the warnings say on how many layers, and a null is never beside a value.
check "--conditioning-path kron on the cutting-skip preset" run kron_cs --conditioning \
    --conditioning-path kron --preset presets/skipless-cutting-skip.preset
check "--conditioning-path lanczos on the cutting-skip preset" run lanczos_cs --conditioning \
    --conditioning-path lanczos --preset presets/skipless-cutting-skip.preset
py "kron: certified s_min within its error of the exact one; the warnings name the Kronecker path" '
e, k = doc("cs")["conditioning"], doc("kron_cs")["conditioning"]
lanczos = doc("lanczos_cs")["conditioning"]
assert k["jacobian_exact"] is False
n = 16 * 64
# Where the Kronecker path does not certify, its run repeats the Lanczos-only computation
# bit for bit: the layers whose s_min differs from the Lanczos-only run are the Kronecker
# ones (8 of the network, layers 1..8; the warning counts both networks).  A relative error
# no longer tells them apart: the Lanczos certificate counts the rounding of the products,
# which reaches 1e-3 relative at layer 11 (kappa about 7e4).
kron = []
for l, (x, v, err, top, lv) in enumerate(zip(e["jacobian_s_min"], k["jacobian_s_min"], k["jacobian_s_min_error"], e["jacobian_norm"], lanczos["jacobian_s_min"])):
    assert (v is None) == (err is None), (v, err)
    if v is not None and v != lv:
        kron.append(l + 1)
        assert abs(v - x) <= err + 4 * n * 2.0**-52 * top, (l + 1, v, x, err)
assert kron == list(range(1, 9)), kron
w = [t for t in k["warnings"] if "on the Kronecker path" in t]
assert len(w) == 1 and "at 8 of the 24 layers of both networks" in w[0], k["warnings"]'
check "--conditioning-path with a bad value names the four accepted" \
    bash -c "'$BIN' --batch --conditioning --conditioning-path krylov 2>&1 >/dev/null | grep -qF \"accepted auto|exact|lanczos|kron\" && [ \${PIPESTATUS[0]} -eq 2 ]"

# The block people train: heads, an orthogonal W^O, pre-LN and an MLP.
check "the full block (4 heads, W^O, pre-LN, MLP)" run block -T 8 -d 32 -L 3 --heads 4 --head 2 \
    --wo orthogonal --ln-place pre -n ln --mlp gelu --init cutting-skip --init-c 1.5 --conditioning \
    --conditioning-path exact
py "heads: kappa(W_VO) = 1 under cutting-skip with W^O, kappa(B) from B itself (not kappa(W_VO) kappa(A)), kappa(K) = |K|/s_min(K)" '
k = doc("block")["conditioning"]
assert all(abs(v - 1) < 1e-12 for v in k["kappa_value_output"]), k["kappa_value_output"]
assert all(v is not None for v in k["kappa_jacobian"] + k["kappa_dominant"]), k
assert any(abs(b - a) > 1e-6 * b for a, b in zip(k["kappa_attention"], k["kappa_dominant"])), k
for kj, norm, smin in zip(k["kappa_jacobian"], k["jacobian_norm"], k["jacobian_s_min"]):
    assert abs(kj - norm / smin) <= 1e-12 * kj
sv = k["shown_layer"]["jacobian_singular_values"]
assert len(sv) == 8 * 32 and sv[0] == k["jacobian_norm"][0]'

# Linear attention overflows before its tokens do: nulls from that layer with a warning, and the
# shown layer past it has null singular values (it was a LAPACK error before).
check "linear attention past its overflow" run overflow -a linear -T 8 -d 16 -L 40 -l 40 -s 4 --conditioning
py "the overflow: a warning naming its layer, every value from there null, the shown layer null" '
k = doc("overflow")["conditioning"]
w = [x for x in k["warnings"] if "attention matrix overflows" in x]
assert w, k["warnings"]
s = k["shown_layer"]
assert all(v is None for v in s["attention_singular_values"] + s["value_output_singular_values"]), s
assert all(v is None for v in k["kappa_attention"][-5:]), k["kappa_attention"]'

# Above T*d = 4096: no K, Lanczos estimates with their error bounds.
check "matrix-free run (T*d = 8192)" run large -T 32 -d 256 -L 1 --init cutting-skip --conditioning
py "above T*d = 4096: jacobian_exact false, kappa_jacobian_skip null, estimates with error bounds, a warning" '
k = doc("large")["conditioning"]
assert k["jacobian_exact"] is False and k["shown_layer"]["jacobian_singular_values"] is None
assert k["kappa_jacobian_skip"] == [None]
assert k["jacobian_norm"][0] > 0 and 0 < k["jacobian_s_min"][0] < k["jacobian_norm"][0]
assert 0 <= k["jacobian_s_min_error"][0] < 1e-3 * k["jacobian_s_min"][0], k["jacobian_s_min_error"]
assert any("Lanczos" in w for w in k["warnings"])'
# The matrix-free path counts the layers of both networks together: every count a warning
# gives is out of the 2L layers of both networks, never a bare "at 3 layers" that reads as
# more layers than the network has (L = 2 here: its counts reach 3).
check "matrix-free run at L = 2 (T*d = 4352)" run counted -T 16 -d 272 -L 2 --conditioning
py "the matrix-free warnings count layers out of the 4 of both networks, none more" '
import re
said = [w for w in doc("counted")["conditioning"]["warnings"] if re.search(r"\bat \d+ ", w)]
assert said, "no warning with a count"
for w in said:
    assert not re.search(r"\bat \d+ layers?\b", w), w
    for n in re.findall(r"\bat (\d+) of the 4 layers of both networks", w):
        assert 1 <= int(n) <= 4, w
    assert re.search(r"\bat \d+ of the 4 layers of both networks", w), w'

# The softmax demo: small alpha concentrates at (e^beta + n - 1)/(e^beta - 1).  softmax is
# 1/2-Lipschitz per row, so every singular value moves by at most alpha*|Z|_F/2 <= 3 alpha
# here (|Z|_F^2 ~ chi^2(100)/10, below 36 for these seeds), and Weyl bounds kappa.
check "softmax demo run" run demo --softmax-demo -T 10 -d 10 --seeds 300 --init-alpha 1e-3 --init-beta 2
py "softmax demo: 300 draws within the perturbation bound of the closed form; median and closed form reported" '
d = doc("demo")["softmax_demo"]; n, beta, alpha = 10, 2.0, 1e-3
closed = (math.exp(beta) + n - 1) / (math.exp(beta) - 1)
assert d["n"] == n and d["draws"] == 300 and len(d["kappa"]) == 300
assert abs(d["closed_form"] - closed) <= 1e-14 * closed, (d["closed_form"], closed)
top, bottom, delta = 1.0, (math.exp(beta) - 1) / (math.exp(beta) + n - 1), 3 * alpha
lo, hi = (top - delta) / (bottom + delta), (top + delta) / (bottom - delta)
assert all(lo <= k <= hi for k in d["kappa"]), (lo, hi, min(d["kappa"]), max(d["kappa"]))
assert lo <= d["median"] <= hi
assert len(set(d["kappa"])) > 250, "the draws differ"'
check "diffuse softmax demo run" run diffuse --softmax-demo --preset presets/softmax-demo-diffuse.preset
py "softmax demo at beta = 0: closed form null (infinite), the draws spread over more than a decade" '
d = doc("diffuse")["softmax_demo"]
assert d["closed_form"] is None
k = sorted(v for v in d["kappa"] if v is not None)
assert k[len(k) // 10] > 100 and k[9 * len(k) // 10] > 10 * k[len(k) // 10], (k[len(k) // 10], k[9 * len(k) // 10])'

# The export: conditioning.csv holds the JSON's numbers; layers.csv's settings line names the
# initialisation, and running it again gives the same document.
check "--conditioning --export run" run exported -T 6 -d 10 -L 2 --init cutting-skip --init-beta 2 \
    --conditioning --export "$tmp/export"
py "conditioning.csv: one row per layer with every series of the JSON, the same numbers" '
import csv
k = doc("exported")["conditioning"]
rows = list(csv.reader(l for l in open(os.path.join(tmp, "export", "conditioning.csv")) if not l.startswith("#")))
head, body = rows[0], rows[1:]
assert len(body) == 2 and [r[0] for r in body] == ["1", "2"], body
for j, name in enumerate(head[1:], 1):
    for l, r in enumerate(body):
        want = k[name][l]
        assert (r[j] == "" and want is None) or float(r[j]) == want, (name, l, r[j], want)
assert len(head) == 1 + 2 * 12, head'
settings=$(sed -n 2p "$tmp/export/layers.csv" | sed 's/^# //')
# shellcheck disable=SC2086
check "layers.csv's settings line (with --init) reproduces the run" run again $settings --conditioning
py "the same document from the settings line" 'assert doc("again") == doc("exported")'

# The path: pinned by --conditioning-path; on auto, priced at the rate ATTNSCOPE_GFLOPS pins
# (the screen uses the same rule: tests/tui/conditioning.sh).  At 1e5 GFLOP/s building K
# is priced in milliseconds, at 0.01 in days, whatever this machine does.
path=(-T 8 -d 16 -L 2 --init cutting-skip --conditioning)
exact_of() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["conditioning"]["jacobian_exact"])' "$tmp/$1.json"; }
check "--conditioning-path lanczos: kappa(K) by Lanczos at T*d = 128" run lanczos "${path[@]}" --conditioning-path lanczos
check "  jacobian_exact false" test "$(exact_of lanczos)" = False
# K not built: the warning says whose choice that was, the option's or the budget's.
warning_says() { # name, text: a warning of the document's conditioning has text
    "$PY" -c 'import json, sys
sys.exit(0 if any(sys.argv[2] in w for w in json.load(open(sys.argv[1]))["conditioning"]["warnings"]) else 1)' \
        "$tmp/$1.json" "$2" || { echo "  $1.json lacks '$2'"; return 1; }
}
check "  its warning: the option chose the path, not the budget" warning_says lanczos \
    "K (128 x 128) is not built, as --conditioning-path lanczos asks (chosen by the option, not by the time or memory budget)"
check "--conditioning-path kron: kappa(K) without K at T*d = 128" run kron "${path[@]}" --conditioning-path kron
check "  its warning: the option chose the path, not the budget" warning_says kron \
    "K (128 x 128) is not built, as --conditioning-path kron asks (chosen by the option, not by the time or memory budget)"
check "  and says nothing of a budget" bash -c "! grep -q 'does not fit the time or memory budget' '$tmp/lanczos.json' '$tmp/kron.json'"
check "--conditioning-path exact: K built" run exact "${path[@]}" --conditioning-path exact
check "  jacobian_exact true" test "$(exact_of exact)" = True
check "auto on a fast machine (ATTNSCOPE_GFLOPS=1e5): K built, nothing said" \
    env ATTNSCOPE_GFLOPS=1e5 bash -c "'$BIN' --batch ${path[*]} >'$tmp/fast.json' 2>'$tmp/fast.err'"
check "  jacobian_exact true, stderr empty" test "$(exact_of fast)" = True -a ! -s "$tmp/fast.err"
# At T*d = 4096 building K (a 4096 x 4096 SVD) is priced above Lanczos at any rate: the rate
# decides whether it is still within 60 s.
check "auto on a slow machine (ATTNSCOPE_GFLOPS=0.01), T*d = 4096: Lanczos, and stderr says why and how to force it" \
    env ATTNSCOPE_GFLOPS=0.01 bash -c "'$BIN' --batch ${path[*]} -T 64 -d 64 -L 1 >'$tmp/slow.json' 2>'$tmp/slow.err'"
check "  jacobian_exact false" test "$(exact_of slow)" = False
check "  its warning: K does not fit the budget" warning_says slow \
    "building K (4096 x 4096) does not fit the time or memory budget"
check "  the message names the price and --conditioning-path exact" \
    grep -qE "building K \(4096 x 4096\) is priced at [0-9.e+]+ s here, above 60 s: kappa\(K\) is estimated without K instead \(the Kronecker path, Lanczos where it cannot run; --conditioning-path exact builds it\)" "$tmp/slow.err"
refused_slow() { # args...: exit 2 at 1e-4 GFLOP/s, the estimate (the conditioning's with the
    # rest: one bound for every batch job; "up to" where it is a ceiling) and the ways to go
    # ahead named
    ATTNSCOPE_GFLOPS=1e-4 "$BIN" --batch "$@" >"$tmp/refused.out" 2>"$tmp/refused.err"
    local status=$?
    [ $status -eq 2 ] && [ ! -s "$tmp/refused.out" ] &&
        grep -qE "is estimated at (up to )?[0-9.]+ (h|days) \([0-9.e+]+ s\), above 60 min \(the bound without --max-time\): to go ahead, give --max-time [0-9]+ or more, or --no-confirm" "$tmp/refused.err" ||
        { echo "  status $status: $(head -c 300 "$tmp/refused.err")"; return 1; }
}
check "auto priced above an hour: refused (exit 2), naming the estimate and how to go ahead" \
    refused_slow "${path[@]}" -L 8
check "  a pinned path is bounded alike" refused_slow "${path[@]}" -L 8 --conditioning-path lanczos
check "  --no-confirm runs it" env ATTNSCOPE_GFLOPS=1e-4 bash -c "'$BIN' --batch ${path[*]} -L 8 --conditioning-path lanczos --no-confirm >/dev/null"
# The engineer's size (issue 25): refused at once, naming a size that fits the bound, whose own
# estimate is within it (at a pinned rate, so the machine's load decides nothing).
engineer=(--conditioning -T 512 -d 2048 -L 24 --heads 16 --mlp gelu)
fits_at() { # the T and d the refusal at --max-time 300 names
    ATTNSCOPE_GFLOPS=10 "$BIN" --batch "${engineer[@]}" --max-time 300 2>&1 >/dev/null |
        sed -nE 's/.*the conditioning fits at T = ([0-9]+), d = ([0-9]+) .*/\1 \2/p'
}
read -r fit_t fit_d <<<"$(fits_at)"
check "the engineer's size (T=512, d=2048, L=24, 16 heads, MLP) refused at once, naming a size that fits 5 min" \
    test -n "$fit_t" -a -n "$fit_d"
fit_estimate() {
    local s
    s=$(ATTNSCOPE_GFLOPS=10 "$BIN" --batch "${engineer[@]}" -T "$fit_t" -d "$fit_d" --max-time 1 2>&1 >/dev/null |
        sed -nE 's/.*is estimated at (up to )?([^,]* \()?([0-9.e+]+) s\)?, above.*/\3/p')
    "$PY" -c "import sys; sys.exit(0 if 1 < float(sys.argv[1]) <= 300 else 1)" "${s:-nan}" ||
        { echo "  T=$fit_t d=$fit_d estimated at '${s}' s"; return 1; }
}
check "  that size's own estimate is within 5 min" fit_estimate
# Followed with the same options, the size a refusal names is accepted: its candidates are
# priced on the path --conditioning-path pins, with the memory checks the run makes (they were
# priced on auto's path, whose Lanczos is far cheaper than building K, and K at the size named
# was then refused: T = 32, d = 32 estimated at 53 s here).
# (Started at T*d = 4096: above it --conditioning-path exact is refused for the size alone.)
suggest=(--conditioning -T 32 -d 128 -L 8 --heads 4 --mlp gelu --conditioning-path exact)
followed() {
    local t d
    read -r t d <<<"$(ATTNSCOPE_GFLOPS=3 "$BIN" --batch "${suggest[@]}" --max-time 10 2>&1 >/dev/null |
        sed -nE 's/.*the conditioning fits at T = ([0-9]+), d = ([0-9]+) .*/\1 \2/p')"
    [ -n "$t" ] || { echo "  no size named"; return 1; }
    ATTNSCOPE_GFLOPS=3 "$BIN" --batch "${suggest[@]}" -T "$t" -d "$d" --max-time 10 >"$tmp/followed.json" \
        2>"$tmp/followed.err" && [ "$(exact_of followed)" = True ] ||
        { echo "  T=$t d=$d: $(head -c 300 "$tmp/followed.err")"; return 1; }
}
check "--conditioning-path exact refused at --max-time 10: the size it names, followed, is accepted (K built)" followed
# The settings' own rules price a candidate too: a window of 64 needs T > 64, so no size with
# T <= 64 is named (T = 64, d = 128 was, and following it was refused with "-w/--window 64:
# accepted 1..63"); 64 token ids fix T = 64 (T = 32 was named).  Where a size within the rules
# fits, it is named, and followed, accepted.
seq 0 63 >"$tmp/ids64.txt"
rule_followed() { # none|named GFLOP/s --max-time args...: what the refusal names, followed
    local expect=$1 gflops=$2 bound=$3 t d
    shift 3
    read -r t d <<<"$(ATTNSCOPE_GFLOPS=$gflops "$BIN" --batch "$@" --max-time "$bound" 2>&1 >/dev/null |
        sed -nE 's/.*the conditioning fits at T = ([0-9]+), d = ([0-9]+) .*/\1 \2/p')"
    if [ -z "$t" ]; then
        [ "$expect" = none ] || { echo "  no size named at --max-time $bound"; return 1; }
        return 0
    fi
    [ "$expect" = named ] || { echo "  T=$t d=$d named at --max-time $bound, where no size within the rules fits"; return 1; }
    ATTNSCOPE_GFLOPS=$gflops "$BIN" --batch "$@" -T "$t" -d "$d" --max-time "$bound" \
        >/dev/null 2>"$tmp/rule.err" || { echo "  T=$t d=$d: $(head -c 300 "$tmp/rule.err")"; return 1; }
}
windowed=(--conditioning -T 256 -d 256 -L 1 --mask window-causal -w 64)
check "-w 64 refused at --max-time 0.2: no size the window refuses (T <= 64) is named" \
    rule_followed none 10 0.2 "${windowed[@]}"
check "-w 64 refused at --max-time 0.5: the size it names, followed, is accepted" \
    rule_followed named 10 0.5 "${windowed[@]}"
tokens64=(--conditioning --token-ids "$tmp/ids64.txt" --input embedding -d 512 -L 2)
check "64 token ids refused at --max-time 0.5: no T but 64 is named" rule_followed none 1 0.5 "${tokens64[@]}"
check "64 token ids refused at --max-time 5: the size it names, followed, is accepted" \
    rule_followed named 1 5 "${tokens64[@]}"
# Unpinned, the next start measures the rate anew: the size named is held to the margin the
# bound suggested beside it keeps (rates.h), and says so.
margin_said() {
    env -u ATTNSCOPE_GFLOPS "$BIN" --batch "${engineer[@]}" --max-time 300 2>&1 >/dev/null |
        grep -qE "within 5 min \(its estimate ×3 within it, as above\) the conditioning fits at" ||
        { echo "  the suggestion does not say its margin"; return 1; }
}
check "unpinned rates: the size named is held to the estimate ×3, and says so" margin_said
check "--verbose prices the conditioning too" \
    bash -c "'$BIN' --batch ${path[*]} --conditioning-path exact --verbose 2>&1 >/dev/null | grep -q '1 seed, conditioning (exact) (dgemm at'"
# On the matrix-free path the default initialisation is priced for the lower bound on kappa(K)
# alone; which layers seek s_min (kappa(K) < 1e4) only the run knows, so the estimate says how
# much more that may take.  Cutting-skip is priced to seek it at every layer: nothing to add.
unpriced_said() {
    local says
    says=$(ATTNSCOPE_GFLOPS=10 "$BIN" --batch --conditioning -T 32 -d 32 -L 4 --conditioning-path kron \
        --verbose --max-time 1e-9 2>&1 >/dev/null | grep '^attnscope: estimate')
    grep -qE "1 seed, conditioning \(Lanczos; up to [0-9.e+]+ s more where kappa\(K\) < 1e4 makes a layer seek s_min, which only the run knows\) \(dgemm at" <<<"$says" &&
        ! grep -qE "up to 0 s more" <<<"$says" || { echo "  $says"; return 1; }
}
check "--verbose, normal init off the exact path: the seconds s_min's search may add" unpriced_said
check "--verbose, cutting-skip off the exact path: s_min's search priced, nothing added" \
    bash -c "ATTNSCOPE_GFLOPS=10 '$BIN' --batch ${path[*]} --conditioning-path kron --verbose --max-time 1e-9 2>&1 >/dev/null | grep -q '1 seed, conditioning (Lanczos) (dgemm at'"

refused() { refused_running "$BIN" -- "$@"; } # expected-stderr-fragment -- args...
# The 2026 presets' blocks (QK-norm per head and full, RoPE and partial rotary, sinks, windows,
# peri- and output-LN, grouped K/V), shrunk to a size where K is built (T = 8, d = 64, two
# layers; gpt-oss's window cut to T - 1): kappa_jacobian and premise_ratio at every layer once
# every head has its own K/V; with the preset's grouped K/V under the causal mask K is singular
# where the G shared values span less than d (token 1 sees itself alone: y_1 = x_1 W_VO, of
# rank at most G·d_h), null with that reason; where they span d (gemma3-4b-small's 2 of 64 on
# d = 64), κ is computed.
shrunk=(-T 8 -d 64 -L 2 --conditioning --conditioning-path exact)
for preset in gemma3-4b gpt-oss-20b gpt2-small llama3-8b mistral-7b olmo2-7b qwen3-8b; do
    window=()
    [ "$preset" = gpt-oss-20b ] && window=(-w 7)
    heads=$(sed -n 's/^heads = //p' "presets/$preset-small.preset")
    check "$preset-small shrunk runs" run "$preset" --preset "$preset-small" "${shrunk[@]}" \
        "${window[@]}"
    check "$preset-small shrunk with H = $heads key/value heads runs" run "$preset-own" \
        --preset "$preset-small" "${shrunk[@]}" "${window[@]}" --kv-heads "$heads"
    py "$preset-small: kappa_jacobian at every layer with its own K/V per head; grouped: null, said why" "
own = doc('$preset-own')['conditioning']
for n in ('kappa_jacobian', 'premise_ratio', 'jacobian_norm', 'jacobian_s_min'):
    assert all(v is not None and v > 0 for v in own[n]), (n, own[n])
assert not any('null at every layer' in w or 'changes: kappa_jacobian' in w for w in own['warnings'])
d = doc('$preset'); k = d['conditioning']; c = d['config']
grouped = c['kv_heads'] and c['kv_heads'] < c['heads']
if grouped and c['kv_heads'] * (c['head_dim'] or c['d'] // c['heads']) < c['d']:
    assert k['kappa_jacobian'] == [None, None], k['kappa_jacobian']
    assert any('so K is singular too' in w for w in k['warnings']), k['warnings']
elif grouped:
    assert all(v is not None and v > 0 for v in k['kappa_jacobian']), k['kappa_jacobian']
else:
    assert k['kappa_jacobian'] == own['kappa_jacobian']"
done

bad=0
refused "--init 'gaussian': accepted normal|xavier|orthogonal|gpt2|small-init|mup|deepnorm|cutting-skip" -- --batch --init gaussian || bad=$((bad + 1))
for v in 0 -1 abc 100.5 nan; do
    refused "--init-alpha '$v': accepted a number 0 < X <= 100" -- --batch --init-alpha "$v" || bad=$((bad + 1))
    refused "--init-c '$v': accepted a number 0 < X <= 100" -- --batch --init-c "$v" || bad=$((bad + 1))
done
for v in -50 50.5 x ""; do
    refused "--init-beta '$v': accepted a number -50 < X <= 50" -- --batch --init-beta "$v" || bad=$((bad + 1))
done
refused "--conditioning: accepted only with --batch" -- --conditioning || bad=$((bad + 1))
refused "--conditioning-path 'fast': accepted auto|exact|lanczos" -- --batch --conditioning --conditioning-path fast ||
    bad=$((bad + 1))
ATTNSCOPE_GFLOPS=abc refused "ATTNSCOPE_GFLOPS='abc': accepted a number of GFLOP/s, 0 < N <= 1e6" -- --batch ||
    bad=$((bad + 1))
refused "--softmax-demo: accepted only with --batch" -- --softmax-demo || bad=$((bad + 1))
refused "--softmax-demo: accepted without --conditioning" -- --batch --softmax-demo --conditioning ||
    bad=$((bad + 1))
printf 'tokens = 8\ninit = cutting-skip\ninit-beta = 99\n' >"$tmp/bad.preset"
refused "$tmp/bad.preset:3: --init-beta '99': accepted a number -50 < X <= 50" -- --batch \
    --preset "$tmp/bad.preset" || bad=$((bad + 1))
refused "--wo gaussian: accepted identity or orthogonal with --init cutting-skip" -- --batch \
    --init cutting-skip --wo gaussian || bad=$((bad + 1))
refused "--jsonl: accepted without --conditioning and --softmax-demo" -- --batch --jsonl \
    --conditioning || bad=$((bad + 1))
refused "--conditioning at T = 64, d = 64, depth 8 needs about" -- --batch -T 64 -d 64 --conditioning --conditioning-path exact \
    --max-memory 100M || bad=$((bad + 1))
check "bad values of the new options exit 2 naming the option, the value and what is accepted" test $bad -eq 0

finish
