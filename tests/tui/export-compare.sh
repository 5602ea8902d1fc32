#!/bin/bash
# x in the compare view writes both panels' files beside every export's: c's eigenvalues of the
# network without and with gap removal, eigenvalues_without_gap_removal.csv and .svg and
# eigenvalues_with_gap_removal.csv and .svg, the second network's from the screen's snapshot;
# and in the conditioning view's compare (normal and cutting-skip), the other initialisation's
# conditioning_INIT.csv, .svg and conditioning_singular_values_INIT.csv and .svg (INIT
# cutting_skip, or normal from cutting-skip) beside the settings' conditioning.*.  Each holds the numbers --batch gives for the
# network it is: the settings its CSV header names, run again (the toggled gap), or --init
# cutting-skip; the CSVs exactly, the SVGs' marks byte for byte or where their axes put them.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

. tests/export_sets.sh
COMPARE=(eigenvalues_without_gap_removal.csv eigenvalues_without_gap_removal.svg
    eigenvalues_with_gap_removal.csv eigenvalues_with_gap_removal.svg)
CONDITIONING=(conditioning.csv conditioning.svg conditioning_singular_values.csv
    conditioning_singular_values.svg)
export_to() { # name files
    press "x in the $1 view asks for a directory" "directory: _" x
    keys -l "$TMP/x/$1"
    press "  Enter: $2 files written to $1/" "exported $2 files to .*/$1/" Enter
}

settings=(-T 32 -d 32 -L 3 -l 2)
mkdir -p "$TMP/x"
trace=$TMP/compare.trace
start 120 40 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${settings[*]} --trace '$trace'"
expect "T = d = 32 computes" "computed in [0-9]+ ms"
press "c: the compare view" "WITH gap removal \(gap center\): eigenvalues" c
check "  its job done" settled
check "  the second network's eigenvalues drawn" wait_gone "computing the same weights"
export_to compare $((${#EVERY_EXPORT[@]} + ${#COMPARE[@]}))
check "  every export's files and both halves' eigenvalues" files_are "$TMP/x/compare" "${EVERY_EXPORT[@]}" "${COMPARE[@]}"
quits "q quits after the export"

# Each half's CSV is the eigenvalues --batch gives for the settings its second line names
# (given back to the command line), exactly; its SVG's marks those of that run's
# eigenvalues.svg, byte for byte.
same_as_batch() { # stem: the half's files against --batch of its own settings
    local csv=$TMP/x/compare/$1.csv run
    read -r -a run <<<"$(sed -n 2p "$csv" | sed 's/^# //')"
    "$BIN" --batch "${run[@]}" --export "$TMP/x/batch-$1" >"$TMP/$1.json" 2>"$TMP/$1.err" ||
        { echo "  --batch ${run[*]}: $(cat "$TMP/$1.err")"; return 1; }
    "$PY" - "$csv" "$TMP/$1.json" "$TMP/x/compare/$1.svg" "$TMP/x/batch-$1/eigenvalues.svg" <<'PY'
import csv, json, re, sys
path, doc, svg, reference = sys.argv[1:]
rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
got = [[float(r["re"]), float(r["im"])] for r in rows]
want = json.load(open(doc))["eigenvalues"]
assert len(got) == len(want) > 0 and got == want, (len(got), len(want))
marks = lambda p: re.findall(r'<(?:circle|text) class="point[^"]*"[^>]*>', open(p).read())
assert marks(svg) == marks(reference) and len(marks(svg)) == len(want), (len(marks(svg)), len(marks(reference)))
PY
}
check "eigenvalues_without_gap_removal.* hold --batch's eigenvalues of the network without (gap off)" \
    same_as_batch eigenvalues_without_gap_removal
check "eigenvalues_with_gap_removal.* hold --batch's eigenvalues of the network with (gap center)" \
    same_as_batch eigenvalues_with_gap_removal
check "  whose settings are the toggled gap's" grep -q -- "--gap center" "$TMP/x/compare/eigenvalues_with_gap_removal.csv"
check "the halves' SVGs are well-formed XML" xmllint --noout "$TMP/x/compare/eigenvalues_without_gap_removal.svg" \
    "$TMP/x/compare/eigenvalues_with_gap_removal.svg"
check "  and titled as the screen's halves" bash -c "grep -q 'WITHOUT gap removal (gap off): eigenvalues' '$TMP/x/compare/eigenvalues_without_gap_removal.svg' &&
    grep -q 'WITH gap removal (gap center): eigenvalues' '$TMP/x/compare/eigenvalues_with_gap_removal.svg'"

# The conditioning view's compare: the settings' initialisation and the other side by side
# (normal and cutting-skip), the other's files named after it.
small=(-T 8 -d 8 -L 3)
conditioning_compare() { # own-init other-init: x in the compare view, held to --batch of the other
    local own=$1 other=$2 name=conditioning-$1 suffix=_${2//-/_} f
    local files=("conditioning$suffix.csv" "conditioning$suffix.svg"
        "conditioning_singular_values$suffix.csv" "conditioning_singular_values$suffix.svg")
    trace=$TMP/$name.trace
    start 120 40 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${small[*]} --init $own --no-confirm --trace '$trace'"
    expect "--init $own: a small stack computes" "computed in [0-9]+ ms"
    press "V: the conditioning view" "κ\(K\) exact" V
    press "c: $own and $other side by side" "init $other: κ" c
    check "  its job done" settled
    check "  both initialisations computed" wait_gone "computing the Jacobians"
    export_to "$name" $((${#EVERY_EXPORT[@]} + ${#CONDITIONING[@]} + ${#files[@]}))
    check "  every export's files, $own's conditioning and $other's" \
        files_are "$TMP/x/$name" "${EVERY_EXPORT[@]}" "${CONDITIONING[@]}" "${files[@]}"
    quits "q quits after the export"
    check "--batch --conditioning --init $other exits 0" bash -c \
        "'$BIN' --batch --conditioning ${small[*]} --init $other --export '$TMP/x/batch-$other' >'$TMP/$other.json' 2>/dev/null"
    check "  ${files[0]} is its conditioning.csv, byte for byte" \
        cmp "$TMP/x/$name/${files[0]}" "$TMP/x/batch-$other/conditioning.csv"
    check "  ${files[2]} its singular values', byte for byte" \
        cmp "$TMP/x/$name/${files[2]}" "$TMP/x/batch-$other/conditioning_singular_values.csv"
    mkdir -p "$TMP/x/other-$other"
    for f in "${files[@]}"; do cp "$TMP/x/$name/$f" "$TMP/x/other-$other/${f/$suffix/}"; done
    check "  and its SVGs draw that document's numbers where their axes put them" \
        "$PY" tests/cli/view_files.py "$TMP/x/other-$other" "$TMP/$other.json" conditioning
    check "  the κ plots are titled by their initialisation, as the screen's" bash -c \
        "grep -q 'init $own: κ' '$TMP/x/$name/conditioning.svg' && grep -q 'init $other: κ' '$TMP/x/$name/${files[1]}'"
    check "  the SVGs are well-formed XML" xmllint --noout "$TMP/x/$name/${files[1]}" "$TMP/x/$name/${files[3]}"
}
conditioning_compare normal cutting-skip
conditioning_compare cutting-skip normal
finish
