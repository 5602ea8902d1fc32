#!/bin/bash
# The preset picker at 80x24: a header longer than its rectangle is shown a page at a time, its
# last row marking the cut ("… page 1/N: Space for more"), and Space turns the pages, so that
# the tour's first step's "Point at:" and "Measured" lines, beyond the first page, are read;
# after the last page Space goes back to the first; moving to another preset starts its
# header at its first page.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2"
expect "80x24: the screen computes" "computed in [0-9]+ ms"
press "P: the picker, the first tour step's header" "Tour 1/11: one attention matrix" P
expect "  its cut is marked, naming Space" "… page 1/[0-9]+: Space for more"
check "  'Point at:' is beyond the first page" absent "Point at:"
pages=$(screen | sed -nE 's/.*page 1\/([0-9]+): Space.*/\1/p' | head -1)
press "Space: the next page, 'Point at:' on it" "Point at:" Space
expect "  marked as page 2" "… page 2/$pages: Space for"
reach_measured() {
    local i
    for ((i = 2; i < pages; i++)); do
        screen | grep -q "Measured (attnscope" && return 0
        keys Space
        wait_for "page $((i + 1))/$pages" || return 1
    done
    screen | grep -q "Measured (attnscope"
}
check "Space on: the 'Measured' lines are read" reach_measured
# One Space at a time, each waited for: a Space sent before the last one was drawn would
# turn past the last page.
to_last_page() {
    local i page
    for ((i = 0; i < pages; i++)); do
        page=$(screen | sed -nE "s/.*page ([0-9]+)\/$pages: Space.*/\1/p" | head -1)
        [ "$page" = "$pages" ] && return 0
        [ -n "$page" ] || return 1
        keys Space
        wait_for "page $((page + 1))/$pages" || return 1
    done
    return 1
}
check "Space on to the last page" to_last_page
expect "  the last page says Space goes back to the first" "… page $pages/$pages: Space for the first"
press "Space after the last page: the first again" "Tour 1/11: one attention matrix" Space
expect "  marked page 1" "… page 1/$pages: Space for more"
keys Space
expect "Space: page 2 again" "… page 2/$pages"
press "j: the next preset, its header from its first page" "Tour 2/11" j
expect "  page 1 of its own" "… page 1/[0-9]+: Space for more"
keys Escape
check "Esc closes the picker" wait_gone "presets \([0-9]+\)"
quits "q quits"

finish
