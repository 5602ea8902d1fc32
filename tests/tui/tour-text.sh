#!/bin/bash
# The tour read at 100x30 in presentation mode (issue 27): every step's title (the status
# line's note) and its "Point at:" note are on screen whole, wrapped between words, never
# cut; and where the note points at the eigenvalue panel's outlier while it is drawn off
# scale (only an arrow on the border), the box names it with its value and its arrow.  The
# titles and notes are read from the preset files here (awk), the outlier's value from
# --batch (python), not from the screen's own code.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

TOUR=presets/tour
squeeze() { tr -s ' ' | sed 's/^ //; s/ $//'; }
title_of() { head -n 1 "$1" | sed 's/^# //'; }
# The "Point at:" note: its line and the indented lines that continue it, joined.
note_of() {
    awk '/^# Point at:/ { on = 1; printf "%s", substr($0, 3); next }
         on && /^#   / { printf " %s", substr($0, 5); next }
         { on = 0 }' "$1" | squeeze
}
# The note as the box shows it: where the box's border says a panel is left out at this
# height (the histogram), without the numbered items that name it ("(2) the stray bar of the
# histogram ...;"), which point at nothing drawn.
note_shown() { # preset
    local note
    note=$(note_of "$1")
    if shows "panels at this height"; then
        python3 -c '
import re, sys
parts = re.split(r" (?=\(\d\) )", sys.argv[1])
kept = [p for p in parts if not (re.match(r"\(\d\) ", p) and "histogram" in p)]
print(" ".join(kept).rstrip("; "))' "$note"
    else
        echo "$note"
    fi
}
# Everything on screen joined into one line, blanks squeezed: wrapped text reads whole.
joined() { screen | tr '\n' ' ' | squeeze; }
# The tour box's inside, its rows joined (borders and padding taken off).
box_text() { screen | sed -n 's/^ *│ \(.*\) │ *$/\1/p' | tr '\n' ' ' | squeeze; }
has_whole() { # text source-function
    local text=$1
    shift
    "$@" | grep -qF -- "$text"
}

trace=$TMP/tour.trace
start 100 30 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' '$BIN' -T 64 -d 64 -L 3 --present --no-confirm --trace '$trace'"
check "the first screen settles" settled
check "no outlier line before a tour step" absent "\(off scale: the arrow"
steps=$(find "$TOUR" -name '*.preset' | wc -l)
k=0
for preset in $(find "$TOUR" -name '*.preset' | sort); do
    k=$((k + 1))
    title=$(title_of "$preset")
    press "step $k: > loads it" "Tour $k/$steps" ">"
    check "step $k: the screen settles" settled
    check "step $k: its title is whole at 100 columns ($title)" has_whole "$title (> next, < back)" joined
    check "step $k: its note is whole in the box (its items on panels drawn)" \
        has_whole "$(note_shown "$preset")" box_text
    check "step $k: the box does not say it is cut" absent "more: a taller terminal"
    if [ "$k" = 1 ]; then
        # The outlier's value as --batch has it, spelled as the legend spells it (%.3g).
        lambda1=$("$BIN" --batch --preset "$preset" --no-confirm |
            python3 -c 'import json, sys; z = json.load(sys.stdin)["eigenvalues"][0]; print("%.3g" % z[0] if z[1] == 0 else "")')
        check "step 1: the batch's λ1 is real ($lambda1)" test -n "$lambda1"
        expect "step 1: the box names the off-scale outlier with its value and its arrow" \
            "│ λ1 = $lambda1 \(off scale: the arrow ▸ at the right border\)\. Point at:"
        press "step 1: z z (the histogram alone): no outlier line" "panel 2 of 3 full screen" z z
        check "  the line is gone" wait_gone "\(off scale: the arrow"
        press "step 1: z z (every panel): the line is back" "\(off scale: the arrow" z z
    fi
    if [ "$k" = 2 ]; then
        check "step 2 (the gap removed, no outlier drawn): no outlier line" absent "\(off scale: the arrow"
    fi
done
quits "q quits"
finish
