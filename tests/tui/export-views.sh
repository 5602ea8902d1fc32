#!/bin/bash
# x exports the panels of the view on screen beside every export's files, named after the view:
# the width sweep's width_sweep.csv and .svg, the gradient view's gradient.*, the token
# similarity's token_similarity.*, the entropy view's row_entropies.*, the conditioning view's conditioning.csv, conditioning.svg and
# conditioning_singular_values.* (the default view: every export's files alone).  Each export
# goes to a directory named after its view, so its "exported N files to …/VIEW/" cannot be on
# screen before its x; its files hold the numbers --batch gives for the same settings
# (tests/cli/view_files.py: the CSVs exactly, the SVGs' points where their axes put them), and
# none of another view's.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

. tests/export_sets.sh
# x, the directory $TMP/x/NAME typed at its prompt, Enter: the export's words name NAME.
export_to() { # name files
    press "x in the $1 view asks for a directory" "directory: _" x
    keys -l "$TMP/x/$1"
    press "  Enter: $2 files written to $1/" "exported $2 files to .*/$1/" Enter
}

settings=(-T 64 -d 64 -L 4)
mkdir -p "$TMP/x"
trace=$TMP/views.trace
start 120 40 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${settings[*]} --trace '$trace'"
expect "T = d = 64 computes" "computed in [0-9]+ ms"
check "  and its job is done" settled
export_to default 8
check "  every export's files alone" files_are "$TMP/x/default" "${EVERY_EXPORT[@]}"

# v to the next view (its name on the status line), its job done, then x: every export's files
# and the view's own, those named.
next_view_exports() { # name words-of-its-status files...
    local name=$1 words=$2
    shift 2
    press "v: the $words view" "view: $words" v
    check "  its job done" settled
    export_to "$name" $((${#EVERY_EXPORT[@]} + $#))
    check "  every export's files and the $name view's" files_are "$TMP/x/$name" "${EVERY_EXPORT[@]}" "$@"
}
next_view_exports sweep "width sweep" width_sweep.csv width_sweep.svg
next_view_exports gradient "gradient norms" gradient.csv gradient.svg
next_view_exports similarity "token similarity" token_similarity.csv token_similarity.svg
next_view_exports entropy entropy row_entropies.csv row_entropies.svg
quits "q quits after the exports"

"$BIN" --batch "${settings[@]}" --sweep-T >"$TMP/doc.json" 2>"$TMP/doc.err"
check "--batch --sweep-T with the same settings exits 0" test $? -eq 0
for view in sweep gradient similarity entropy; do
    check "the $view view's files hold the document's numbers" \
        "$PY" tests/cli/view_files.py "$TMP/x/$view" "$TMP/doc.json" "$view"
done

# The conditioning view (V from the stable rank) of a small stack, K built in full.
small=(-T 8 -d 8 -L 4)
trace=$TMP/conditioning.trace
start 120 40 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${small[*]} --no-confirm --trace '$trace'"
expect "a small stack computes" "computed in [0-9]+ ms"
press "V: the conditioning view" "κ\(K\) exact" V
check "  its job done" settled
export_to conditioning 12
check "  every export's files and the conditioning's" files_are "$TMP/x/conditioning" "${EVERY_EXPORT[@]}" \
    conditioning.csv conditioning.svg conditioning_singular_values.csv conditioning_singular_values.svg
quits "q quits after the export"
"$BIN" --batch "${small[@]}" --conditioning >"$TMP/conditioning.json" 2>"$TMP/conditioning.err"
check "--batch --conditioning with the same settings exits 0" test $? -eq 0
check "the conditioning view's files hold the document's numbers" \
    "$PY" tests/cli/view_files.py "$TMP/x/conditioning" "$TMP/conditioning.json" conditioning
finish
