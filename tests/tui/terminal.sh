#!/bin/bash
# Terminals as they are: resizing below 80×24 shows the size needed (q still works) and
# back redraws; 80×24 fits the three panels; LANG=C and --ascii send no byte above 0x7F;
# colours on a colour terminal, none with NO_COLOR or --no-color.  TERM unset, unknown or
# unable to move the cursor (dumb) exits 2 naming the problem, the tty as it was; vt100
# (no colours) draws every panel in monochrome.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

no_high_bytes() { # file
    ! LC_ALL=C grep -q '[^[:print:][:space:]]' "$1" && ! LC_ALL=C grep -qP '[\x80-\xff]' "$1"
}
# Colour escapes in the pane's contents (capture-pane -e): ESC [ ... 3N m with N = 1..7.
has_colours() {
    tm capture-pane -p -e -t 0 | grep -qE $'\e\\[([0-9;]*;)?3[1-7](;[0-9;]*)?m'
}
no_colours() { ! has_colours; }

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 3"
expect "starts at 120×40" "computed in [0-9]+ ms"
check "a colour terminal gets colours" has_colours
tm resize-window -t 0 -x 60 -y 20
expect "at 60×20 it says what it needs" "needs at least 80×24"
expect "and the size it has" "this terminal is 60×20"
expect "... and that only q acts there" "other keys do nothing"
# Keys that would change the settings or open a box, pressed unseen, do nothing.
keys T g ?
expect "a key below the minimum keeps the size message" "needs at least 80×24"
tm resize-window -t 0 -x 120 -y 40
expect "back at 120×40 it redraws the panels" "stable rank sr\(Σℓ\)"
expect "and the keys pressed while small did nothing: T and the gap as they were" \
    "T=256 +d=256 .*gap=off"
check "... nor did ? open the help" absent "attnscope keys"
check "... nor did they start a job" absent "computing"
tm resize-window -t 0 -x 60 -y 20
expect "small again" "needs at least 80×24"
# Narrower than the message: each sentence wrapped at a word, none cut; lower than the
# wrapped sentences: the brief form, whole.
tm resize-window -t 0 -x 20 -y 8
expect "at 20×8 the message wraps at words, the size whole" "^ *least 80×24 *$"
expect "... and says how to quit" "^ *q to quit; other *$"
tm resize-window -t 0 -x 20 -y 5
expect "at 20×5 the brief form: what it needs" "^ *needs 80×24 *$"
expect "... and that q quits" "^ *q quits *$"
quits "q quits from the size message"

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN'"
expect "80×24: computes" "computed in [0-9]+ ms"
expect "80×24: eigenvalue panel" "^eigenvalues √T·λ"
expect "80×24: histogram panel" "singular values √T·s"
expect "80×24: stable-rank panel" "stable rank sr"
expect "80×24: legends" "network \(gap off\)"
expect "80×24: every parameter" "mask=full +gap=off +LN=none +skip=none"
expect "80×24: ... to the last" "layer=1/8 +seed=1"
press "80×24: the help's first page" "page 1 of [0-9]+, Space turns" "?"
press "80×24: its last page holds the last key whole" "q {3,}quit" PPage
keys q

start 120 40 "env LANG=C LC_ALL=C '$BIN' -L 3"
expect "LANG=C: computes" "computed in [0-9]+ ms"
press "LANG=C: help" "attnscope keys" "?"
screen >"$TMP/c-help.txt"
keys Escape
expect "LANG=C: ASCII spellings" "sqrtT\*lambda"
screen >"$TMP/c.txt"
check "LANG=C: no byte above 0x7F (plots, legends, status)" no_high_bytes "$TMP/c.txt"
check "LANG=C: no byte above 0x7F (help)" no_high_bytes "$TMP/c-help.txt"
keys q

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --ascii -L 3 -m causal"
expect "--ascii: computes" "computed in [0-9]+ ms"
expect "--ascii: the causal note, spelled in ASCII" "eigenvalues exact: the diagonal"
screen >"$TMP/a.txt"
check "--ascii in a UTF-8 locale: no byte above 0x7F" no_high_bytes "$TMP/a.txt"
keys q

# The Linux console has no braille glyphs (a font of 512 at most): ASCII there, in a UTF-8
# locale too.
start 120 40 "env TERM=linux LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 3"
expect "TERM=linux: computes" "computed in [0-9]+ ms"
expect "TERM=linux: ASCII spellings" "sqrtT\*lambda"
screen >"$TMP/linux.txt"
check "TERM=linux in a UTF-8 locale: no byte above 0x7F (no braille)" no_high_bytes "$TMP/linux.txt"
keys q

start 120 40 "env NO_COLOR=1 LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 3"
expect "NO_COLOR: runs" "computed in [0-9]+ ms"
check "NO_COLOR: no colours" no_colours
expect "NO_COLOR: glyphs still tell the series apart" "●.*network .*○.*counterpart"
keys q

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --no-color -L 3"
expect "--no-color: runs" "computed in [0-9]+ ms"
check "--no-color: no colours" no_colours
keys q

refused_term() { # name "env arguments" expected-message
    local name=$1
    start 100 30 "stty -g >'$TMP/$name.before'; env $2 '$BIN' -L 2 2>'$TMP/$name.err'; echo \$? >'$TMP/$name.st'; stty -g >'$TMP/$name.after'"
    wait_file "$TMP/$name.after"
    [ "$(cat "$TMP/$name.st")" = 2 ] && grep -qF -- "$3" "$TMP/$name.err" &&
        cmp -s "$TMP/$name.before" "$TMP/$name.after" ||
        { echo "  status $(cat "$TMP/$name.st" 2>/dev/null), stderr: $(cat "$TMP/$name.err")"; return 1; }
}
check "TERM unset: exit 2, says so, tty unchanged" refused_term unset "-u TERM" "TERM is not set"
check "TERM=dumb: exit 2, cannot move the cursor" refused_term dumb "TERM=dumb" "TERM=dumb cannot move the cursor"
check "TERM=nonesuch: exit 2, no terminfo description" refused_term nonesuch "TERM=nonesuch" "TERM=nonesuch: no terminfo description"

start 120 40 "env TERM=vt100 LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -L 3"
expect "TERM=vt100: computes" "computed in [0-9]+ ms"
expect "TERM=vt100: eigenvalue panel" "^eigenvalues √T·λ"
expect "TERM=vt100: histogram panel" "singular values √T·s"
expect "TERM=vt100: stable-rank panel" "stable rank sr"
check "TERM=vt100: no colours" no_colours
keys q
finish
