#!/bin/bash
# The warning list (!) loses no character where it wraps: every warning's text, its lines
# joined, is the text --batch reports, at 80, 100 and 120 columns.  The lines after a
# warning's first are indented 3 columns, and were once wrapped to the first line's width, so
# the box's border cut their last characters ("…its circle and th", "(T + 1 outcom").
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# The warnings of the box on the screen, its lines joined, one a line as "N. text"; the
# top one is listed only when whole (the box has no "more below" or another warning
# follows it), as scrolling brings each to the top.
box_warnings() { # cols
    screen >"$TMP/box.txt"
    python3 - "$TMP/box.txt" "$1" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
cols = int(sys.argv[2])
box_cols = min(cols - 4, 100)
left = (cols - box_cols) // 2
inner = [l.ljust(cols)[left + 2:left + box_cols - 2].rstrip() for l in lines[2:]]
bottom = next(i for i, l in enumerate(lines[2:]) if l[left:left + 1] == "└")
more_below = "more below" in lines[2 + bottom]
entries = []
for text in inner[:bottom]:
    if re.match(r"\d+\. ", text):
        entries.append(text)
    elif text.startswith("   ") and entries:
        entries[-1] += " " + text[3:]
for i, entry in enumerate(entries):
    if i + 1 < len(entries) or not more_below:
        print(entry)
PY
}

screen_differs() { [ "$(screen)" != "$1" ]; } # capture

# Every warning of the box, scrolled through, is whole: its joined text is --batch's.
warnings_whole() { # cols options...
    local cols=$1
    shift
    "$BIN" --batch "$@" | python3 -c '
import json, sys
for i, w in enumerate(json.load(sys.stdin)["warnings"]):
    print("%d. %s" % (i + 1, w))' >"$TMP/expected.txt" || return 1
    : >"$TMP/seen.txt"
    local count before
    count=$(wc -l <"$TMP/expected.txt")
    # Down until the box has nothing more below, each scroll waited for (the screen changes):
    # a capture before the box was drawn again would miss the warning Down brought.
    for _ in $(seq "$count"); do
        box_warnings "$cols" >>"$TMP/seen.txt"
        screen | grep -q "more below" || break
        before=$(screen)
        keys Down
        poll_until "$TIMEOUT" 0.1 screen_differs "$before" || break
    done
    sort -u "$TMP/seen.txt" -o "$TMP/seen.txt"
    if ! diff <(sort "$TMP/expected.txt") "$TMP/seen.txt" >"$TMP/diff.txt"; then
        screen >>"$TMP/diff.txt"
        return 1
    fi
}

for size in "80 24" "100 30" "120 40"; do
    set -- $size
    for options in "--qk-norm head --sink 0" "--preset gpt-oss-20b-small"; do
        # shellcheck disable=SC2086 # the options are words
        start "$1" "$2" "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $options"
        expect "$1x$2, $options: computed" "computed in [0-9]+ ms"
        press "$1x$2, $options: ! opens the warnings" "warnings of the shown result" "!"
        # shellcheck disable=SC2086
        if warnings_whole "$1" $options; then
            ok "$1x$2, $options: every warning's text is whole in the box"
        else
            not_ok "$1x$2, $options: a warning's text is cut in the box" "$TMP/diff.txt"
        fi
        keys Escape
        check "$1x$2, $options: Esc closes the warnings" wait_gone "warnings of the shown result"
        quits "$1x$2, $options: q quits"
    done
done
finish
