#!/bin/bash
# The 8-colour inks follow the background COLORFGBG names, and read on both where it names
# none: the real binary on an 8-colour terminal (TERM=xterm) in tmux, its colours read from
# the capture's escape codes (capture-pane -e).  Yellow (33), cyan (36) and green (32) vanish
# on white, blue (34) on black.  Every session ends with q and checks the exit status.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# The foreground colours (30..37) used anywhere on the screen, one per line.
colours() {
    tm capture-pane -p -e -t 0 | grep -oE $'\x1b\\[[0-9;]*m' | tr -d $'\x1b[m' | tr ';' '\n' |
        grep -xE '3[0-7]' | sort -u
}
uses() { colours | grep -qx "$1"; }
avoids() { ! colours | grep -qx "$1"; }

session() { # name COLORFGBG-or-empty
    local env="LANG=$UTF8 LC_ALL=$UTF8 TERM=xterm"
    [ -n "$2" ] && env="$env COLORFGBG='$2'"
    start 120 40 "env -u COLORFGBG $env '$BIN' -T 32 -d 32 -L 3"
    expect "$1: computes" "computed in [0-9]+ ms"
    # The theory circles are drawn, in the theory ink, with the data.
    expect "$1: the circles are drawn" "\|z\| = 1, z = √T·λ"
}

session "light background (COLORFGBG=0;15)" "0;15"
check "light: the theory ink is magenta" uses 35
check "light: the data are blue" uses 34
for c in 33 36 32 37; do check "light: no colour $c, which vanishes on white" avoids "$c"; done
quits "light: q quits with status 0"

session "dark background (COLORFGBG=15;0)" "15;0"
check "dark: the theory ink is yellow" uses 33
check "dark: the data are cyan" uses 36
for c in 34 30; do check "dark: no colour $c, which vanishes on black" avoids "$c"; done
quits "dark: q quits with status 0"

session "unknown background (no COLORFGBG)" ""
check "unknown: the theory ink is magenta" uses 35
check "unknown: the outlier is red" uses 31
for c in 30 32 33 34 36 37; do check "unknown: no colour $c, which vanishes on black or white" avoids "$c"; done
quits "unknown: q quits with status 0"
finish
