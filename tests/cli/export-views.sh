#!/bin/bash
# The views' files of --export: with --sweep-T the width sweep (width_sweep.csv, .svg), with
# --conditioning the κ plot and K's (or B's) singular values (conditioning.svg,
# conditioning_singular_values.csv, .svg) beside conditioning.csv; and those of the views the
# result holds (gradient, token similarity, row entropies), or stderr says why not.  Each CSV holds the
# document's numbers exactly, and each SVG draws them where its axes, read off their labelled
# ticks, put them (view_files.py, svg_points.py); a point one pixel off fails that check.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

. tests/export_sets.sh
SWEEP=(width_sweep.csv width_sweep.svg)
# What every run computes (the token similarity), and where the run has them the gradients
# and the shown matrix's row entropies: batch writes those views' files beside every export's.
SIMILARITY=(token_similarity.csv token_similarity.svg)
RESULT_VIEWS=(gradient.csv gradient.svg "${SIMILARITY[@]}" row_entropies.csv row_entropies.svg)
CONDITIONING=(conditioning.csv conditioning.svg conditioning_singular_values.csv
    conditioning_singular_values.svg)

# A plain run: the gradient, token-similarity and entropy views' files, each CSV the
# document's numbers exactly, each SVG its points where its axes put them.
check "--export exits 0" batch_document "$tmp/views" -T 24 -d 32 -L 4 --export "$tmp/views"
check "  and says it wrote 14 files, none left out" grep -qx "attnscope: wrote 14 files to $tmp/views" "$tmp/views.err"
check "  every export's files and the gradient, similarity and entropy views'" \
    files_are "$tmp/views" "${EVERY_EXPORT[@]}" "${RESULT_VIEWS[@]}"
check "  the three views' CSVs and SVGs hold the document's numbers" \
    "$PY" tests/cli/view_files.py "$tmp/views" "$tmp/views.json" gradient similarity entropy
check "  their SVGs are well-formed XML" xmllint --noout "$tmp/views/gradient.svg" \
    "$tmp/views/token_similarity.svg" "$tmp/views/row_entropies.svg"
# Causal attention with an ensemble: the row entropies of a causal matrix, the means' curves.
check "--export of a causal ensemble exits 0" batch_document "$tmp/causal" -T 16 -d 16 -L 3 --mask causal --seeds 3 --export "$tmp/causal"
check "  its views' files hold the document's numbers" \
    "$PY" tests/cli/view_files.py "$tmp/causal" "$tmp/causal.json" gradient similarity entropy
# Where the run did not compute them: no file, and stderr says which and why.
check "--export of two relu heads exits 0" batch_document "$tmp/relu" -T 16 -d 16 -L 2 --heads 2 --attention relu --export "$tmp/relu"
check "  without the gradients' and the row entropies' files" files_are "$tmp/relu" "${EVERY_EXPORT[@]}" "${SIMILARITY[@]}"
check "  and says which it left out and why" grep -qxF "attnscope: wrote 10 files to $tmp/relu; left out: gradient.csv and .svg, as the frozen-attention gradient formula needs one head (with H heads X_L is no product P1·W^V_ℓ·P2); row_entropies.csv and .svg, as relu rows are not distributions (they do not sum to 1)" "$tmp/relu.err"
check "  its similarity files hold the document's numbers" \
    "$PY" tests/cli/view_files.py "$tmp/relu" "$tmp/relu.json" similarity
check "--export with a MLP leaves the gradients' out, saying why" bash -c "'$BIN' --batch -T 16 -d 16 -L 2 --mlp gelu --export '$tmp/mlp' 2>&1 >/dev/null | grep -qxF 'attnscope: wrote 12 files to $tmp/mlp; left out: gradient.csv and .svg, as the frozen-attention gradient formula needs no MLP (the formula has attention and values only)'"

# The sweep over T = 16 … 128: four points a curve, three decades of ticks on x.
check "--sweep-T --export exits 0" batch_document "$tmp/sweep" -T 128 -d 128 -L 3 --sweep-T --export "$tmp/sweep"
check "  and says it wrote 16 files" grep -q "wrote 16 files to $tmp/sweep" "$tmp/sweep.err"
check "  every export's files, the result's views' and the sweep's" files_are "$tmp/sweep" "${EVERY_EXPORT[@]}" "${RESULT_VIEWS[@]}" "${SWEEP[@]}"
check "  the sweep's CSV and SVG hold the document's width_sweep" \
    "$PY" tests/cli/view_files.py "$tmp/sweep" "$tmp/sweep.json" sweep
check "  width_sweep.svg is well-formed XML" xmllint --noout "$tmp/sweep/width_sweep.svg"

# The exact path (K built in full, κ(K + I) beside κ(K)), and Lanczos, where every κ(K) is
# null and the proved lower bounds take κ(K + I)'s places, with B's singular values.
check "--conditioning --export exits 0 (exact)" batch_document "$tmp/exact" -T 8 -d 8 -L 4 --conditioning --export "$tmp/exact"
check "  every export's files, the result's views' and the conditioning's" files_are "$tmp/exact" "${EVERY_EXPORT[@]}" "${RESULT_VIEWS[@]}" "${CONDITIONING[@]}"
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
# T = d = 256: B's 65 536 products in the CSV, and in the SVG what the screen draws, the
# histogram's bars and a tick per pixel column (its count, least and greatest value), not a
# mark per value (5 MB once).
check "--conditioning --export at T = d = 256 exits 0" batch_document "$tmp/wide" -T 256 -d 256 -L 1 --conditioning --export "$tmp/wide"
check "  the CSV holds the 65 536 products, the SVG's bars and ticks account for each" \
    "$PY" tests/cli/view_files.py "$tmp/wide" "$tmp/wide.json" conditioning
below_bytes() { # file bytes
    [ "$(stat -c %s "$1")" -lt "$2" ] || { echo "  $1: $(stat -c %s "$1") bytes"; return 1; }
}
check "  conditioning_singular_values.svg is below 100 kB" below_bytes "$tmp/wide/conditioning_singular_values.svg" 100000
check "  and well-formed XML" xmllint --noout "$tmp/wide/conditioning_singular_values.svg"
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
cp -r "$tmp/views" "$tmp/views-digit"
shifted "$tmp/views-digit/gradient.csv" '(\n2,)([0-9.e+-]+)'
check "a gradient.csv value changed fails the check" bash -c "! '$PY' tests/cli/view_files.py '$tmp/views-digit' '$tmp/views.json' gradient 2>/dev/null"
counted() { # file: its first tick counts one value more
    "$PY" - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
changed = re.sub(r'(class="point" data-count=")(\d+)', lambda m: m.group(1) + str(int(m.group(2)) + 1), text, count=1)
assert changed != text
open(sys.argv[1], "w").write(changed)
PY
}
cp -r "$tmp/wide" "$tmp/counted"
counted "$tmp/counted/conditioning_singular_values.svg"
check "a tick counting one value more fails the check" bash -c "! '$PY' tests/cli/view_files.py '$tmp/counted' '$tmp/wide.json' conditioning 2>/dev/null"
check "a CSV value changed fails the check" bash -c "! '$PY' tests/cli/view_files.py '$tmp/digit' '$tmp/exact.json' conditioning 2>/dev/null"

# Without them, none of the views' files; and an earlier export's view files are an export's
# own, replaced with the rest.
check "a plain export into the sweep's directory replaces it" batch_document "$tmp/plain" -T 16 -d 16 -L 2 --export "$tmp/sweep"
check "  with every export's files and the result's views' alone" files_are "$tmp/sweep" "${EVERY_EXPORT[@]}" "${RESULT_VIEWS[@]}"
finish
