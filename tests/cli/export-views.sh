#!/bin/bash
# The views' files of --export: with --sweep-T the width sweep (width_sweep.csv, .svg), with
# --conditioning the κ plot and K's (or B's) singular values (conditioning.svg,
# conditioning_singular_values.csv, .svg) beside conditioning.csv.  Each CSV holds the
# document's numbers exactly, and each SVG draws them where its axes, read off their labelled
# ticks, put them (view_files.py, svg_points.py); a point one pixel off fails that check.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

. tests/export_sets.sh
SWEEP=(width_sweep.csv width_sweep.svg)
CONDITIONING=(conditioning.csv conditioning.svg conditioning_singular_values.csv
    conditioning_singular_values.svg)

# The sweep over T = 16 … 128: four points a curve, three decades of ticks on x.
check "--sweep-T --export exits 0" batch_document "$tmp/sweep" -T 128 -d 128 -L 3 --sweep-T --export "$tmp/sweep"
check "  and says it wrote ten files" grep -q "wrote 10 files to $tmp/sweep" "$tmp/sweep.err"
check "  every export's files and the sweep's" files_are "$tmp/sweep" "${EVERY_EXPORT[@]}" "${SWEEP[@]}"
check "  the sweep's CSV and SVG hold the document's width_sweep" \
    "$PY" tests/cli/view_files.py "$tmp/sweep" "$tmp/sweep.json" sweep
check "  width_sweep.svg is well-formed XML" xmllint --noout "$tmp/sweep/width_sweep.svg"

# The exact path (K built in full, κ(K + I) beside κ(K)), and Lanczos, where every κ(K) is
# null and the proved lower bounds take κ(K + I)'s places, with B's singular values.
check "--conditioning --export exits 0 (exact)" batch_document "$tmp/exact" -T 8 -d 8 -L 4 --conditioning --export "$tmp/exact"
check "  every export's files and the conditioning's" files_are "$tmp/exact" "${EVERY_EXPORT[@]}" "${CONDITIONING[@]}"
check "  the κ plot and K's singular values hold the document's" \
    "$PY" tests/cli/view_files.py "$tmp/exact" "$tmp/exact.json" conditioning
check "--conditioning --export exits 0 (Lanczos)" batch_document "$tmp/lanczos" -T 32 -d 32 -L 3 --conditioning --conditioning-path lanczos --export "$tmp/lanczos"
lanczos_bounds() { "$PY" -c 'import json, sys
k = json.load(open(sys.argv[1]))["conditioning"]
assert not k["jacobian_exact"] and k["shown_layer"]["jacobian_singular_values"] is None
assert any(v is not None for v in k["kappa_jacobian_lower"])' "$tmp/lanczos.json"; }
check "  on the matrix-free path, with proved bounds to draw" lanczos_bounds
check "  the κ plot (the bounds as ▴) and B's singular values hold the document's" \
    "$PY" tests/cli/view_files.py "$tmp/lanczos" "$tmp/lanczos.json" conditioning
# One layer: its x axis has one tick, where the κ plot's points are.
check "--conditioning --export of one layer exits 0" batch_document "$tmp/one" -T 8 -d 8 -L 1 --conditioning --export "$tmp/one"
check "  its κ plot and K's singular values hold the document's" \
    "$PY" tests/cli/view_files.py "$tmp/one" "$tmp/one.json" conditioning
check "the new SVGs are well-formed XML" xmllint --noout "$tmp/exact/conditioning.svg" \
    "$tmp/exact/conditioning_singular_values.svg" "$tmp/lanczos/conditioning.svg" \
    "$tmp/lanczos/conditioning_singular_values.svg"
version=$("$BIN" --version | sed 's/^attnscope //')
for f in width_sweep.csv; do
    check "$f names the version and itself" bash -c "head -1 '$tmp/sweep/$f' | grep -q '^# attnscope $version, $f: '"
done
for f in conditioning_singular_values.csv; do
    check "$f names the version and itself" bash -c "head -1 '$tmp/exact/$f' | grep -q '^# attnscope $version, $f: '"
done

# The checks can fail: a marker one pixel lower, or a CSV value one more.
shifted() { # file pattern: the first match's number (a pixel or a CSV value) plus 1
    "$PY" - "$@" <<'PY'
import re, sys
path, pattern = sys.argv[1], sys.argv[2]
text = open(path).read()
changed = re.sub(pattern, lambda m: m.group(1) + repr(float(m.group(2)) + 1), text, count=1)
assert changed != text
open(path, "w").write(changed)
PY
}
cp -r "$tmp/sweep" "$tmp/moved"
shifted "$tmp/moved/width_sweep.svg" '(class="point" data-series="0" [^>]*? y=")([-0-9.]+)'
check "a marker one pixel off fails the check" bash -c "! '$PY' tests/cli/view_files.py '$tmp/moved' '$tmp/sweep.json' sweep 2>/dev/null"
cp -r "$tmp/exact" "$tmp/digit"
shifted "$tmp/digit/conditioning_singular_values.csv" '(\n2,)([0-9.e+-]+)'
check "a CSV value changed fails the check" bash -c "! '$PY' tests/cli/view_files.py '$tmp/digit' '$tmp/exact.json' conditioning 2>/dev/null"

# Without them, none of the views' files; and an earlier export's view files are an export's
# own, replaced with the rest.
check "a plain export into the sweep's directory replaces it" batch_document "$tmp/plain" -T 16 -d 16 -L 2 --export "$tmp/sweep"
check "  with every export's files alone" files_are "$tmp/sweep" "${EVERY_EXPORT[@]}"
finish
