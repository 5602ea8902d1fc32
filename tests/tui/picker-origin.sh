#!/bin/bash
# The preset picker's origin column (shipped, tour, yours) is whole at every width: where the
# names are wider than the list leaves them, a long name is cut and its cut marked (…), where
# at 100 columns the column itself was cut ("shipp").  The longest shipped names are in view
# after 30 steps down.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Every row of the list: a name (whole, or cut with …), then its origin, whole.
origins_whole() { # cols
    screen >"$TMP/picker.txt"
    python3 - "$TMP/picker.txt" "$1" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
cols = int(sys.argv[2])
box_cols = min(cols - 4, 120)
left = (cols - box_cols) // 2
rows = [l.ljust(cols)[left + 2:left + box_cols - 2] for l in lines[2:]
        if l[left:left + 1] == "│"]
listed = [re.match(r"^([ >]) (\S+) +(\S+)(  |$)", r) for r in rows]
listed = [m for m in listed if m]
bad = [m.group(0) for m in listed if m.group(3) not in ("shipped", "tour", "yours")]
cut = [m.group(2) for m in listed if m.group(2).endswith("…")]
print("    # %d rows listed, %d names cut, bad: %s" % (len(listed), len(cut), bad))
sys.exit(0 if len(listed) >= 15 and not bad else 1)
PY
}

for size in "80 24" "100 30" "120 40"; do
    set -- $size
    start "$1" "$2" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2"
    expect "$1x$2: computes" "computed in [0-9]+ ms"
    press "$1x$2: P opens the picker" "presets \([0-9]+\)" P
    for _ in $(seq 30); do keys Down; done
    expect "$1x$2: the long names in view" "depth-softmax-xavier-s"
    check "$1x$2: every origin whole (a long name cut and marked)" origins_whole "$1"
    keys Escape
    check "$1x$2: Esc closes the picker" wait_gone "presets \([0-9]+\)"
    quits "$1x$2: q quits"
done
finish
