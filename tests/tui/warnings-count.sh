#!/bin/bash
# The status line's "! N warnings" counts the list ! opens ("warnings of the shown result (N)"),
# in every view: the stable rank with its theory curve off, the similarity view, the
# conditioning view (whose own warnings stay out of the others' list: conditioning-warnings.sh).
# They disagreed where a warning was about a panel not drawn: counted by the list, not by the
# status line (gpt2-small-small without the curve: 2 against 3; fig1-markov's conditioning
# view: 4 against 5, its similarity view: none against 1).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

status_count() { # N of "! N warning(s)", 0 where the line offers "q quit" instead
    local hint
    hint=$(screen | grep -oE '! [0-9]+ warnings?  \? help|\? help  q quit' | tail -n 1)
    case "$hint" in
    !*) grep -oE '[0-9]+' <<<"$hint" ;;
    \?*) echo 0 ;;
    esac
}
list_count() { screen | grep -oE 'warnings of the shown result \([0-9]+\)' | grep -oE '[0-9]+'; }
counts_agree() { # description: the job done, the status line's count against the list's
    if ! settled; then
        not_ok "$1 (the job never settled)"
        return
    fi
    local counted listed
    counted=$(status_count)
    press "$1: ! opens the list" "warnings of the shown result \([0-9]+\)" "!"
    listed=$(list_count)
    if [ -n "$counted" ] && [ "$counted" = "$listed" ]; then
        ok "$1: the status line counts $counted, as the list"
    else
        screen >"$TMP/screen.txt"
        not_ok "$1: the status line counts '$counted', the list holds '$listed'" "$TMP/screen.txt"
    fi
    keys Escape
    check "$1: Esc closes the list" wait_gone "warnings of the shown result"
}

trace=$TMP/gpt2.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset presets/gpt2-small-small.preset --no-confirm --trace '$trace'"
expect "gpt2-small-small computes" "computed in [0-9]+ ms"
counts_agree "stable rank"
press "o: the theory curves off" "theory overlays off" o
counts_agree "stable rank, no theory curve"
quits "q quits"

trace=$TMP/markov.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset presets/fig1-markov.preset --no-confirm --trace '$trace'"
expect "fig1-markov computes" "computed in [0-9]+ ms"
counts_agree "stable rank"
press "V: the conditioning view" "view: conditioning" V
counts_agree "conditioning"
press "v four times: the similarity view" "view: token similarity" v v v v
counts_agree "token similarity"
quits "q quits"
finish
