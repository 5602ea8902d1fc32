#!/bin/bash
# --export DIR (issue 7): CSV files with headers and the right row counts, well-formed SVG
# with one mark per data point (a histogram's values counted in ticks per pixel column),
# atomic all-or-nothing writes, and clear failures (issue 12: missing parents, the umask, a
# failed re-export).
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

"$BIN" --batch -T 48 -d 64 -L 5 --seeds 2 --export "$tmp/out" >"$tmp/doc.json" 2>"$tmp/err"
check "export exits 0 and says where (every export's 8 files and 6 of the views)" grep -qx "attnscope: wrote 14 files to $tmp/out" "$tmp/err"
check "JSON still on stdout" "$PY" -c "import json; json.load(open('$tmp/doc.json'))"

rows() { # file expected-lines
    [ "$(wc -l <"$1")" -eq "$2" ] || { echo "  $1: $(wc -l <"$1") lines, expected $2"; return 1; }
}
check "eigenvalues.csv: version and settings, header, T rows" rows "$tmp/out/eigenvalues.csv" 51
check "singular_values.csv: version and settings, header, T rows" rows "$tmp/out/singular_values.csv" 51
check "layers.csv: version and settings, header, L+1 rows" rows "$tmp/out/layers.csv" 9
check "CSV headers name the columns" bash -c "sed -n 3p '$tmp/out/eigenvalues.csv' | grep -qx 'index,re,im,modulus,sqrtT_re,sqrtT_im' &&
    sed -n 3p '$tmp/out/layers.csv' | grep -q '^layer,stable_rank,stable_rank_minus_one,'"
version=$("$BIN" --version | sed 's/^attnscope //')
for f in eigenvalues.csv singular_values.csv layers.csv; do
    check "$f names the version" bash -c "head -1 '$tmp/out/$f' | grep -q '^# attnscope $version, $f: '"
done
settings_reproduce() { # file, the line of its settings: given back to the command line, the same document
    local settings
    settings=$(sed -n "$2p" "$tmp/out/$1" | sed -E 's/^# //; s/^<desc>attnscope [^ ]+ //; s/<\/desc>$//')
    [ -n "$settings" ] || return 1
    # shellcheck disable=SC2086
    "$BIN" --batch $settings >"$tmp/again.json" && cmp -s "$tmp/again.json" "$tmp/doc.json"
}
for f in eigenvalues.csv singular_values.csv layers.csv; do
    check "$f's settings line reproduces the run" settings_reproduce "$f" 2
done
# A checkpoint and token ids under paths with a space and a quote: the settings line quotes
# them as a shell reads one word (integ2 wrote them bare: `--weights ck sp/model.safetensors`),
# and, read by the shell, runs the same document again.
quoted_paths_reproduce() {
    local dir="$tmp/ck sp'q" ids="$tmp/ids sp.txt" settings
    "$BIN" -T 8 -d 8 -L 2 --export-weights "$dir" >/dev/null 2>&1 && printf '0\n1\n2\n3\n4\n5\n6\n7\n' >"$ids" &&
        "$BIN" --batch -T 8 -d 8 -L 2 --vocab 8 --input embedding --weights "$dir" --token-ids "$ids" \
            --export "$tmp/quoted" >"$tmp/quoted.json" 2>/dev/null || { echo "  the run failed"; return 1; }
    settings=$(sed -n 2p "$tmp/quoted/layers.csv" | sed 's/^# //')
    eval "set -- $settings"
    local words="$*"
    [ "${words%--weights $dir/model.safetensors --token-ids $ids}" != "$words" ] &&
        "$BIN" --batch "$@" >"$tmp/quoted-again.json" 2>/dev/null &&
        cmp -s "$tmp/quoted.json" "$tmp/quoted-again.json" || { echo "  the line: $settings"; return 1; }
}
check "paths with a space and a quote: quoted in the settings line, which reproduces the run" quoted_paths_reproduce
# The files of --sweep-T and --conditioning: their settings line names the option that
# computed them (and the conditioning's path as it went), so that it runs them again: the
# file written by that line's export is the same byte for byte (main's lines left the
# option out, and their export had no such file).
extra_reproduces() { # directory, file
    local settings
    settings=$(sed -n 2p "$1/$2" | sed 's/^# //')
    rm -rf "$tmp/again"
    # shellcheck disable=SC2086
    "$BIN" --batch $settings --export "$tmp/again" >/dev/null 2>&1 && cmp "$1/$2" "$tmp/again/$2" ||
        { echo "  $2's line: $settings"; return 1; }
}
"$BIN" --batch -T 8 -d 8 -L 2 --sweep-T --conditioning --export "$tmp/extras" >/dev/null 2>&1
"$BIN" --batch -T 8 -d 16 -L 2 --conditioning --conditioning-path lanczos --export "$tmp/lanczos" >/dev/null 2>&1
for f in width_sweep.csv conditioning.csv conditioning_singular_values.csv; do
    check "$f's settings line reproduces it" extra_reproduces "$tmp/extras" "$f"
done
check "conditioning.csv of the Lanczos path: its line pins the path, and reproduces it" \
    eval 'sed -n 2p "$tmp/lanczos/conditioning.csv" | grep -q -- "--conditioning --conditioning-path lanczos$" &&
        extra_reproduces "$tmp/lanczos" conditioning.csv'
for f in eigenvalues.svg singular_values.svg stable_rank.svg attention_map.svg entropy.svg; do
    check "$f names the version" grep -q "^<desc>attnscope $version --tokens" "$tmp/out/$f"
    check "$f's settings (its desc) reproduce the run" settings_reproduce "$f" 3
done

csv_matches_json() { # the export's directory, its document
    "$PY" - "$1" "$2" <<'PY'
import csv, json, sys
out, doc = sys.argv[1], json.load(open(sys.argv[2]))
layers = list(csv.DictReader(line for line in open(out + "/layers.csv") if not line.startswith("#")))
columns = [c for c in layers[0] if c not in ("layer", "mask")]
# The mask column: each layer's own (the run's -m here, no --window-layers), none at layer 0.
assert [r["mask"] for r in layers] == [""] + [doc["config"]["mask"]] * (len(layers) - 1)
# One schema: every per-layer series of the JSON document is a column, and no other; a member
# of an object that is a per-layer series (an array of L + 1 entries, or L: "attention_entropy"'s
# "mean", "theory"'s "stable_rank", "attention_phase"'s "side") is a column GROUP_MEMBER.  A
# member null as a whole (theory's curve where theory has none) is an empty column of that
# name.  The runs have T other than L and L + 1, so that no per-token array passes for one.
per_layer = lambda v: isinstance(v, list) and len(v) in (len(layers), len(layers) - 1)
nulls = set()
for group in [k for k, v in doc.items() if isinstance(v, dict) and k != "config"]:
    for k, v in doc[group].items():
        if per_layer(v):
            doc[group + "_" + k] = v
        elif v is None and group + "_" + k in columns:
            nulls.add(group + "_" + k)
series = [k for k, v in doc.items() if per_layer(v)]
assert sorted(columns) == sorted(series + list(nulls)), (sorted(set(columns) ^ set(series + list(nulls))))
def value(text):
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return text
for name in columns:
    column = [value(r[name]) for r in layers]
    if name in nulls:
        assert column == [None] * len(layers), name
        continue
    if len(doc[name]) == len(layers) - 1:  # the gradients: layers 1..L, layer 0 empty
        assert column[0] is None, name
        column = column[1:]
    assert column == doc[name], (name, column, doc[name])
rows = lambda name: csv.DictReader(line for line in open(out + "/" + name) if not line.startswith("#"))
sv = [float(r["singular_value"]) for r in rows("singular_values.csv")]
assert sv == doc["singular_values"]
ev = [[float(r["re"]), float(r["im"])] for r in rows("eigenvalues.csv")]
assert ev == doc["eigenvalues"]
# The README's layout: T pairs [re, im] by modulus, largest first, and T singular values,
# largest first, of A unscaled (a row-stochastic A: λ1 = 1, s1 >= 1); the CSVs' sqrtT columns
# are those times √T (to a rounding).
import math
T = doc["config"]["T"]; root = math.sqrt(T)
assert len(ev) == T and all(len(z) == 2 for z in ev)
moduli = [math.hypot(*z) for z in ev]
assert moduli == sorted(moduli, reverse=True) and abs(ev[0][0] - 1) < 1e-12 and ev[0][1] == 0, ev[:2]
assert len(sv) == T and sv == sorted(sv, reverse=True) and sv[0] >= 1 - 1e-12, sv[:2]
close = lambda a, b: abs(a - b) <= 4e-16 * max(abs(a), abs(b), 1e-300)
scaled = [[float(r["sqrtT_re"]), float(r["sqrtT_im"])] for r in rows("eigenvalues.csv")]
assert all(close(s[k], root * z[k]) for s, z in zip(scaled, ev) for k in (0, 1))
assert all(close(float(r["sqrtT_singular_value"]), root * x) for r, x in zip(rows("singular_values.csv"), sv))
PY
}
check "CSV values equal the JSON values exactly" csv_matches_json "$tmp/out" "$tmp/doc.json"
# Markov attention: theory's curves are numbers (attention_phase's sides null); softmax above:
# the sides are words (theory's curves null).
"$BIN" --batch -T 48 -d 64 -L 5 -a markov --export "$tmp/markov" >"$tmp/markov.json" 2>/dev/null
check "CSV values equal the JSON values exactly, theory's curves too (markov)" \
    csv_matches_json "$tmp/markov" "$tmp/markov.json"

# stable_rank.svg's x axis counts layers: its ticks are whole layers, every one of 0..L where L
# is small (main ticked -L 3 at 0.5, 1.5, ... and -L 1 at 0.2, 0.4, ...).
layer_ticks() { # depth, expected labels
    rm -rf "$tmp/ticks"
    "$BIN" --batch -T 8 -d 8 -L "$1" --export "$tmp/ticks" >/dev/null 2>&1 || return 1
    local labels
    labels=$("$PY" - "$tmp/ticks/stable_rank.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
bottom = re.search(r'<line class="tick" x1="[0-9.]+" x2="[0-9.]+" y1="([0-9]+)"', svg).group(1)
print(" ".join(re.findall(r'<text x="[0-9.]+" y="%d" text-anchor="middle">([^<]*)</text>' % (int(bottom) + 18), svg)))
PY
)
    [ "$labels" = "$2" ] || { echo "  -L $1: x ticks '$labels', expected '$2'"; return 1; }
}
check "stable_rank.svg: -L 1 ticks its layers 0 and 1 only" layer_ticks 1 "0 1"
check "stable_rank.svg: -L 3 ticks whole layers" layer_ticks 3 "0 1 2 3"
check "SVG files are well-formed XML" xmllint --noout "$tmp/out/eigenvalues.svg" "$tmp/out/singular_values.svg" "$tmp/out/stable_rank.svg" "$tmp/out/attention_map.svg" "$tmp/out/entropy.svg"
marks() { # file expected
    local n
    n=$(grep -c 'class="point' "$1")
    [ "$n" -eq "$2" ] || { echo "  $1: $n marks, expected $2"; return 1; }
}
check "eigenvalues.svg: one mark per eigenvalue" marks "$tmp/out/eigenvalues.svg" 48
histogram_accounts() { # singular_values.svg's bars and ticks account for the document's values
    "$PY" - "$tmp" <<'PY'
import json, math, sys
sys.path.insert(0, "tests/cli")
from svg_points import check_histogram
doc = json.load(open(sys.argv[1] + "/doc.json"))
check_histogram(open(sys.argv[1] + "/out/singular_values.svg").read(), doc["singular_values"],
                scale=math.sqrt(doc["config"]["T"]))
PY
}
check "singular_values.svg: its bars and ticks account for every singular value, s1 apart" histogram_accounts
check "stable_rank.svg: one mark per layer and network" marks "$tmp/out/stable_rank.svg" 12
# The entropy view's SVG draws the document's numbers: each mark carries its value (data-y),
# series 0-2 the mean entropies of both networks and the least row's, 5 the random-energy
# prediction at layer 1; the ceiling ln T and Zhai's bound are lines.
entropy_drawn() {
    "$PY" - "$tmp/out/entropy.svg" "$tmp/doc.json" <<'PY'
import json, re, sys
svg, doc = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
marks = {}
for k, x, y in re.findall(r'class="point" data-series="(\d)" data-x="([^"]+)" data-y="([^"]+)"', svg):
    marks.setdefault(int(k), []).append((int(float(x)), float(y)))
e, ce = doc["attention_entropy"], doc["counterpart_attention_entropy"]
want = {0: e["mean"], 1: ce["mean"], 2: e["min"]}
for k, values in want.items():
    assert sorted(marks[k]) == [(l, v) for l, v in enumerate(values) if v is not None], (k, marks.get(k))
theory = doc["attention_entropy_theory"]["mean"]
assert marks.get(5, []) == ([(1, theory)] if theory is not None else []), marks.get(5)
assert "Zhai bound" in svg and "ln T" in svg
PY
}
check "entropy.svg: the document's entropies, mark by mark, and the prediction" entropy_drawn
# Every axis of every SVG reads: at least three ticks, each labelled, labels distinct and
# increasing along the axis.  The dashed circle is |√T·λ| = 1, the screen's: its radius is
# one unit of the x axis as its ticks place it.
svg_readable() { # file
    "$PY" - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
ticks = re.findall(r'<line class="tick" x1="([-0-9.]+)" x2="[-0-9.]+" y1="([-0-9.]+)" y2="[-0-9.]+" '
                   r'stroke="#333"/><text x="[-0-9.]+" y="[-0-9.]+" text-anchor="(middle|end)">([^<]+)</text>', text)
x = [(float(a), float(v)) for a, _, anchor, v in ticks if anchor == "middle"]
y = [(float(b), float(v)) for _, b, anchor, v in ticks if anchor == "end"]
assert len(x) >= 3 and len(y) >= 3, (len(x), len(y))
for axis, increasing in ((x, 1), (y, -1)):  # SVG's y grows downwards
    pixels = [p for p, _ in axis]
    values = [v for _, v in axis]
    assert len(set(values)) == len(values), values
    assert all(increasing * (b - a) > 0 for a, b in zip(pixels, pixels[1:])), pixels
    assert values == sorted(values), values
unit = re.search(r'<circle class="theory unit" cx="[-0-9.]+" cy="[-0-9.]+" r="([-0-9.]+)"', text)
if unit:
    (p0, v0), (p1, v1) = x[0], x[-1]
    per_unit = (p1 - p0) / (v1 - v0)
    assert abs(float(unit.group(1)) - per_unit) < 0.02 * per_unit, (unit.group(1), per_unit)
PY
}
for f in eigenvalues.svg singular_values.svg stable_rank.svg entropy.svg; do
    check "$f: every axis has labelled, ordered ticks" svg_readable "$tmp/out/$f"
done
check "eigenvalues.svg draws the screen's circle |√T·λ| = 1" grep -q 'class="theory unit"' "$tmp/out/eigenvalues.svg"
# With two seeds the screen draws the ensemble's means and its band: so does stable_rank.svg.
# Each network marker sits where the log axis, read off its labelled ticks, puts the
# document's mean (within a pixel).
ensemble_drawn() {
    "$PY" - "$tmp/out/stable_rank.svg" "$tmp/doc.json" <<'PY'
import json, math, re, sys
text, doc = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
ticks = re.findall(r'<line class="tick" x1="[-0-9.]+" x2="[-0-9.]+" y1="([-0-9.]+)" y2="[-0-9.]+" '
                   r'stroke="#333"/><text x="[-0-9.]+" y="[-0-9.]+" text-anchor="end">([^<]+)</text>', text)
(p0, v0), (p1, v1) = [(float(p), math.log10(float(v))) for p, v in (ticks[0], ticks[-1])]
marks = [float(y) - 4 for y in re.findall(r'<text class="point network" x="[-0-9.]+" y="([-0-9.]+)"', text)]
mean = doc["stable_rank_mean"]
assert len(marks) == len(mean), (len(marks), len(mean))
for l, (y, m) in enumerate(zip(marks, mean)):
    expected = p0 + (math.log10(max(m, 1)) - v0) / (v1 - v0) * (p1 - p0)
    assert abs(y - expected) < 1, f"layer {l}: marker at {y}, the mean {m} at {expected}"
assert 'class="band"' in text and "±1 std over 2 seeds" in text and "network (gap off), mean" in text
PY
}
check "stable_rank.svg: the ensemble's means, band and legend, as on the screen" ensemble_drawn
check "no temporary files left" bash -c "! ls -A '$tmp/out' | grep -q '^\.'"

failed_export() {
    touch "$tmp/plainfile"
    "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/plainfile/sub" >"$tmp/o" 2>"$tmp/e"
    local status=$?
    [ $status -eq 2 ] && [ ! -s "$tmp/o" ] &&
        grep -q "^attnscope: --export '$tmp/plainfile/sub': cannot create the directory $tmp/plainfile/sub: Not a directory" "$tmp/e"
}
check "an export that cannot work names the option and the path, says why, exits 2, prints no JSON" failed_export

# Missing parents are created (as the screen's preset save does), with the user's umask.
with_parents() {
    (umask 022 && "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/new/deeper/out" >/dev/null 2>"$tmp/e") &&
        [ "$(ls "$tmp/new/deeper/out" | wc -l)" -eq 14 ] &&
        [ "$(stat -c %a "$tmp/new" "$tmp/new/deeper" "$tmp/new/deeper/out" | sort -u)" = 755 ]
}
check "--export a/b/c creates the missing a and a/b" with_parents
# A parent that cannot be created: nothing is left, not even the parents made before it.
parent_refused() {
    local long
    long=$(printf 'x%.0s' $(seq 300)) # longer than a file name may be
    "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/made/$long/out" >"$tmp/o" 2>"$tmp/e"
    [ $? -eq 2 ] && [ ! -s "$tmp/o" ] && [ ! -e "$tmp/made" ] &&
        grep -q "^attnscope: --export '$tmp/made/$long/out': cannot create the directory $tmp/made/$long: File name too long" "$tmp/e"
}
check "a parent that cannot be created: exit 2, no parent made" parent_refused

# Files and directories get 0666 and 0777 less the umask, as any program's would (mkstemp's
# 0600 is for secrets).
modes() { # umask, expected file mode, expected directory mode
    rm -rf "$tmp/modes"
    (umask "$1" && "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/modes" >/dev/null 2>&1) &&
        [ "$(stat -c %a "$tmp/modes"/* | sort -u)" = "$2" ] && [ "$(stat -c %a "$tmp/modes")" = "$3" ] ||
        { echo "  umask $1: files $(stat -c %a "$tmp/modes"/* | sort -u | paste -sd,), directory $(stat -c %a "$tmp/modes")"; return 1; }
}
check "umask 022: files 0644, directory 0755" modes 022 644 755
check "umask 077: files 0600, directory 0700" modes 077 600 700

# An export replaces its directory as a whole: a later export replaces the earlier set, and a
# failed one leaves the earlier set byte for byte.
"$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/re" >/dev/null 2>&1
cp -r "$tmp/re" "$tmp/re.first"
chmod 750 "$tmp/re"
replaced() {
    "$BIN" --batch -T 12 -d 12 -L 2 --export "$tmp/re" >/dev/null 2>&1 &&
        [ "$(ls "$tmp/re" | wc -l)" -eq 14 ] && [ "$(wc -l <"$tmp/re/eigenvalues.csv")" -eq 15 ] &&
        [ "$(stat -c %a "$tmp/re")" = 750 ] && [ "$(ls -A "$tmp" | grep -c '^\.')" -eq 0 ]
}
check "a re-export replaces the set, keeps the directory's mode, leaves nothing beside it" replaced
rm -rf "$tmp/re" && cp -r "$tmp/re.first" "$tmp/re"
same_as_first() { # files...
    local f
    for f in "$@"; do cmp -s "$tmp/re.first/$f" "$tmp/re/$f" || { echo "  $f changed"; return 1; }; done
    [ "$(ls -A "$tmp" | grep -c '^\.')" -eq 0 ] || { echo "  left beside it: $(ls -A "$tmp" | grep '^\.')"; return 1; }
}
all=(eigenvalues.csv singular_values.csv layers.csv eigenvalues.svg singular_values.svg stable_rank.svg
    attention_map.svg entropy.svg)
write_fails() { # a write past ulimit -f fails (EFBIG, with SIGXFSZ ignored) halfway through
    (trap '' XFSZ && ulimit -f 1 && exec "$BIN" --batch -T 48 -d 64 -L 5 --export "$tmp/re" >/dev/null 2>"$tmp/e")
    [ $? -eq 1 ] && grep -q "File too large" "$tmp/e" && same_as_first "${all[@]}"
}
check "a re-export whose write fails leaves the earlier set byte for byte" write_fails
entry_in_the_way() { # one of the names is a directory: the old code renamed five, then deleted them
    rm "$tmp/re/stable_rank.svg" && mkdir "$tmp/re/stable_rank.svg"
    "$BIN" --batch -T 12 -d 12 -L 2 --export "$tmp/re" >/dev/null 2>"$tmp/e"
    [ $? -eq 2 ] && grep -q "holds stable_rank.svg, which is not a file of an export" "$tmp/e" &&
        same_as_first "${all[@]:0:5}" && [ -d "$tmp/re/stable_rank.svg" ]
}
check "a re-export that cannot complete leaves the earlier files byte for byte" entry_in_the_way
rm -rf "$tmp/re" && cp -r "$tmp/re.first" "$tmp/re"
foreign_file() { # a file the user put there: refused, nothing moved or deleted
    echo mine >"$tmp/re/notes.txt"
    "$BIN" --batch -T 12 -d 12 -L 2 --export "$tmp/re" >/dev/null 2>"$tmp/e"
    [ $? -eq 2 ] && grep -q "holds notes.txt, which is not a file of an export" "$tmp/e" &&
        same_as_first "${all[@]}" && [ "$(cat "$tmp/re/notes.txt")" = mine ]
}
check "a directory holding other files is refused, every file left as it was" foreign_file
# A set with conditioning.csv replaced by one without: the old set leaves whole, nothing of it
# is left beside the directory.
conditioning_replaced() {
    rm -rf "$tmp/cond" && mkdir "$tmp/cond" &&
        "$BIN" --batch -T 8 -d 8 -L 2 --conditioning --export "$tmp/cond/out" >/dev/null 2>&1 &&
        [ -f "$tmp/cond/out/conditioning.csv" ] &&
        "$BIN" --batch -T 8 -d 8 -L 2 --export "$tmp/cond/out" >/dev/null 2>&1 &&
        [ "$(ls "$tmp/cond/out" | wc -l)" -eq 14 ] && [ ! -e "$tmp/cond/out/conditioning.csv" ] &&
        [ "$(ls -A "$tmp/cond")" = out ] || { echo "  left: $(ls -A "$tmp/cond" | paste -sd' ')"; return 1; }
}
check "an export over one with conditioning.csv leaves nothing of the old set" conditioning_replaced
dot() {
    mkdir -p "$tmp/empty" && "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/empty/." >/dev/null 2>"$tmp/e"
    [ $? -eq 2 ] && [ -z "$(ls -A "$tmp/empty")" ] && grep -q "name a directory" "$tmp/e"
}
check "--export DIR/. is refused (an export replaces its directory)" dot

# The SVGs mark what the screen marks (issue 21): λ1 is drawn as the outlier exactly when
# |λ1| >= 2|λ2| (the screen's rule, and the document's "outlier"), s1 exactly when s1 >= 2 s2;
# linear attention and window masks have none.  Their subtitle lists every setting given.
outliers_as_the_screen() { # settings...
    rm -rf "$tmp/rule"
    "$BIN" --batch "$@" --export "$tmp/rule" >"$tmp/rule.json" 2>/dev/null || { echo "  $*: failed"; return 1; }
    "$PY" - "$tmp/rule" "$tmp/rule.json" "$*" <<'PY'
import json, re, sys
out, doc, given = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3].split()
ev = sorted((complex(*z) for z in doc["eigenvalues"]), key=abs, reverse=True)
sv = sorted(doc["singular_values"], reverse=True)
apart = abs(ev[0]) > 0 and abs(ev[0]) >= 2 * abs(ev[1])
assert (doc["outlier"] is not None) == apart, (doc["outlier"], abs(ev[0]), abs(ev[1]))
for name, expected in (("eigenvalues.svg", apart), ("singular_values.svg", sv[0] >= 2 * sv[1])):
    text = open(out + "/" + name).read()
    marks = len(re.findall(r'class="point outlier', text))
    assert marks == int(expected), f"{name}: {marks} outlier marks, the screen's rule gives {int(expected)}"
    subtitle = re.search(r'<text class="subtitle"[^>]*>(.*?)</text>', text, re.S)
    assert subtitle, f"{name}: no subtitle"
    subtitle = " ".join(re.findall(r">([^<]+)<", "<x>" + subtitle.group(1) + "</x>"))
    options = [(given[i], given[i + 1]) for i in range(len(given) - 1) if given[i].startswith("--")]
    for option, value in options:
        assert f"{option} {value}" in subtitle, f"{name}: the subtitle lacks {option} {value}: {subtitle}"
PY
}
check "linear attention: no outlier marked, as on the screen" outliers_as_the_screen \
    --tokens 32 --width 64 --depth 2 --attention linear
check "a window mask: no outlier marked" outliers_as_the_screen --tokens 32 --width 64 --depth 2 --mask window --window 2
check "a causal window mask: no outlier marked" outliers_as_the_screen \
    --tokens 32 --width 64 --depth 2 --mask window-causal --window 2
check "softmax at T = 256: λ1 and s1 marked, as on the screen" outliers_as_the_screen --tokens 256 --width 256 --depth 1
check "the block's settings in the subtitle" outliers_as_the_screen --tokens 16 --width 32 --depth 2 \
    --heads 2 --wo gaussian --mlp relu --init xavier --ln-place pre --layernorm ln --skip plain \
    --skip-gain 0.5 --seeds 2

finish
