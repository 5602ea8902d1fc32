#!/bin/bash
# The attention map view (V V from the first view: the one before the conditioning, whose
# Lanczos path is pinned so that passing it asks nothing), read off
# the screen: under a
# causal mask every cell above the diagonal is blank and every cell on it is shaded (a
# lower-triangular map), the block said; y then shows the product A_8⋯A_1, whose first
# column is the darkest shade in every row and whose column mass peaks at token 1.  In UTF-8
# with colour and in ASCII without (NO_COLOR): the shades are glyphs either way.  And x with
# --export-matrix writes the matrices --batch writes.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
PY=${PY:-python3}

# The map's cells on the screen: rows from the one labelled 1 to the one labelled T, two
# columns a cell from the column after the label's margin.  Prints whether the cells above the
# diagonal are blank, whether those on it are shaded, and the cells a side.
map_cells() { # T
    screen | "$PY" -c '
import re, sys
T = sys.argv[1]
lines = sys.stdin.read().split("\n")
first = next(i for i, l in enumerate(lines) if re.match(r"^ *1 \S", l))
last = next(i for i, l in enumerate(lines) if re.match(r"^ *%s \S" % T, l))
start = lines[first].index("1 ") + 2
rows = [l[start:] for l in lines[first:last + 1]]
n = len(rows)
cells = [[r[2 * c:2 * c + 2] for c in range(n)] for r in rows]
above = all(cells[r][c].strip() == "" for r in range(n) for c in range(r + 1, n))
diagonal = all(cells[r][r].strip() != "" and cells[r][r][0] == cells[r][r][1] for r in range(n))
print("above-blank" if above else "above-shaded", "diagonal-shaded" if diagonal else "diagonal-blank", n)
' "$1"
}
# In every row of the product, the first cell has the darkest shade of the row.
first_column_darkest() {
    screen | "$PY" -c '
import re, sys
shades = " .:-=+*#%@"
lines = sys.stdin.read().split("\n")
first = next(i for i, l in enumerate(lines) if re.match(r"^ *1 \S", l))
last = next(i for i, l in enumerate(lines) if re.match(r"^ *48 \S", l))
start = lines[first].index("1 ") + 2
for l in lines[first:last + 1]:
    row = l[start:].split("   ")[0]
    levels = [shades.index(ch) for ch in row[::2] if ch in shades]
    if not levels or levels[0] != max(levels) or levels[0] == 0:
        sys.exit(1)
'
}

for mode in "utf8 color" "ascii nocolor"; do
    read -r charset colour <<<"$mode"
    locale=$UTF8
    [ "$charset" = ascii ] && locale=C
    env="LANG=$locale LC_ALL=$locale"
    [ "$colour" = nocolor ] && env="$env NO_COLOR=1"
    start 80 24 "env $env '$BIN' -T 48 -d 48 -L 8 -l 8 --mask causal -n ln --conditioning-path lanczos"
    expect "$mode: the first view is the stable rank" "stable rank"
    check "$mode: no map before the key" absent "attention map"
    press "$mode: V V shows the attention map" "attention map A \(as built\)" V V
    # The block follows the panel: 3.3 tokens where the explanation takes one status line,
    # 4×4 where it wraps onto two (ASCII spells it longer).
    expect "$mode: the block is said" "block means [^ ]+ tokens"
    result=$(map_cells 48)
    check "$mode: nothing above the diagonal ($result)" grep -q "above-blank" <<<"$result"
    check "$mode: every diagonal cell shaded ($result)" grep -q "diagonal-shaded" <<<"$result"
    press "$mode: y shows the product" "attention product A_" y
    expect "$mode: its column mass peaks at token 1" "largest 0.9[0-9]* at j=1"
    check "$mode: the product's first column is the darkest in every row" first_column_darkest
    result=$(map_cells 48)
    check "$mode: the product is lower-triangular too ($result)" grep -q "above-blank" <<<"$result"
    quits "$mode: q quits"
done

# --export-matrix on the screen: x writes the shown layer's matrix (and, with y, the product)
# in full, and the input, the very files --batch --export --export-matrix writes for the same
# settings.
settings=(-T 24 -d 24 -L 4 -l 4 --mask causal -n ln --attention-map product)
mkdir -p "$TMP/x"
start 80 24 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${settings[*]} --export-matrix"
expect "--export-matrix: the screen computes" "computed in [0-9]+ ms"
press "x asks for a directory" "directory: _" x
keys -l "$TMP/x/screen"
press "Enter: eleven files, the matrix, the product and the input among them" "exported 11 files to " Enter
same_matrices() {
    "$BIN" --batch "${settings[@]}" --export "$TMP/x/batch" --export-matrix >/dev/null 2>&1 &&
        cmp "$TMP/x/batch/attention_matrix.csv" "$TMP/x/screen/attention_matrix.csv" &&
        cmp "$TMP/x/batch/attention_product.csv" "$TMP/x/screen/attention_product.csv" &&
        cmp "$TMP/x/batch/input.csv" "$TMP/x/screen/input.csv" &&
        cmp "$TMP/x/batch/attention_map.svg" "$TMP/x/screen/attention_map.svg"
}
check "the screen's matrices, input and map are --batch's byte for byte" same_matrices
quits "q quits"
finish
