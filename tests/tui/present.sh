#!/bin/bash
# Presentation mode (issue 16): --present and b; eigenvalues as whole ● cells; the tour
# step's "Point at:" note in a box; z shows one panel on the whole screen, cycling; a mouse
# click on a panel shows it alone and a second click all again; the wheel over the
# stable-rank panel steps the shown layer.  Mouse events are typed as an xterm sends them
# (ESC [ M button column row, each + 32, 1-based; a click is a press and a release).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/present.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' '$BIN' -T 64 -d 64 -L 3 --present --trace '$trace'"
expect "computes" "computed in [0-9]+ ms"
eigen_cells() { screen | head -n 30 | cut -c1-50 | grep -o "●" | wc -l; }
many_points() { [ "$(eigen_cells)" -ge 20 ]; }
check "--present: the eigenvalues are whole ● cells (20 or more in the panel)" many_points
check "no tour caption before a tour step" wait_gone "Point at:"
press "> loads the tour's first step" "Tour 1/11" ">"
expect "its Point at: note is on screen, in a box titled tour" "tour ─"
expect "the note's text" "Point at: \(1\) the highlighted point at 1"
press "Z: presentation mode off, saying so" "presentation mode off" Z
check "Z: the caption goes with it" wait_gone "Point at:"
few_points() { [ "$(eigen_cells)" -le 2 ]; }
check "Z: the eigenvalues are braille dots again" few_points
press "Z: on again" "presentation mode on" Z
expect "the caption is back" "Point at:"

# z: one panel alone, then the next, then all again.
press "z: the eigenvalue panel alone" "panel 1 of 3 full screen" z
check "z: the histogram's title is gone" wait_gone "singular values √T·s"
press "z: the histogram alone" "panel 2 of 3 full screen" z
check "z: the eigenvalue panel's title is gone" wait_gone "^eigenvalues √T·λ"
press "z: the stable rank alone" "panel 3 of 3 full screen" z
press "z: every panel again" "every panel" z
expect "the eigenvalue panel is back" "^eigenvalues √T·λ"

mouse() { # button-byte column row (0-based cells)
    local x y
    x=$(printf '\\x%x' $((33 + $2)))
    y=$(printf '\\x%x' $((33 + $3)))
    # shellcheck disable=SC2059 # the bytes are built as escapes on purpose
    keys -l "$(printf "\033[M%s$x$y" "$1")"
}
click() { mouse " " "$1" "$2" && mouse "#" "$1" "$2"; } # press, release
click 10 5
expect "a click on the eigenvalue panel shows it alone" "one panel full screen \(a click: back\)"
in_trace() { poll_until "$TIMEOUT" 0.1 grep -q "$1" "$trace"; }
check "the click shows in the trace, on panel 1" in_trace "mouse click row=5 col=10 panel=0"
check "the histogram's title is gone" wait_gone "singular values √T·s"
click 10 5
expect "a second click: every panel again" "every panel"
expect "the histogram is back" "singular values √T·s"
before=$(screen | grep -o "layer=[0-9]*/[0-9]*")
mouse "\`" 100 25
expect "the wheel up over the stable-rank panel: the next layer" "layer=2/8"
mouse "a" 100 25
expect "the wheel down: back to layer 1" "layer=1/8"
mouse "\`" 100 5
check "the wheel over the histogram changes no layer" wait_trace "mouse wheel-up row=5 col=100 panel=1"
check "  (the layer is still 1)" test "$(screen | grep -o 'layer=[0-9]*/[0-9]*')" = "layer=1/8"
check "  (and was 1 before the wheel)" test "$before" = "layer=1/8"

press "? lists Z and z" "Z +presentation mode on / off" "?"
expect "and z" "z +zoom: one panel, cycled"
keys Escape
check "the help closes" wait_gone "attnscope keys"
quits "q quits, exit status 0"

# Started on a tour step's preset: its note is on screen at once, and > goes on to the next
# step.  The note describes its settings: a key that changes them takes it away, the key
# that changes them back brings it back.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' '$BIN' --preset '$(pwd)/presets/tour/02-remove-the-gap.preset' --present --no-confirm"
expect "--preset of tour step 2: its note at once" "Point at: \(1\) the outlier is gone"
press "g: the gap removal off, the note that describes it goes" "gap=off" g
check "  the note is gone" wait_gone "the outlier is gone"
press "g again: the gap removal back on, and its note" "the outlier is gone" g
press "> goes on to step 3, not back to step 1" "Tour 3/11" ">"
quits "q quits"

# The second failure mode (issue 24): from step 9, > loads step 10 in the view it names
# (View: entropy), its rows condensed; > again, QK-norm on the same network, diffuse rows.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' '$BIN' --preset '$(pwd)/presets/tour/09-keep-the-rank.preset' --no-confirm"
expect "step 9 in the stable-rank view" "stable rank sr\(Σℓ\) against depth"
press "> step 10: entropy collapse, in the entropy view it names" "Tour 10/11" ">"
expect "  the entropy view's panel" "row entropy H \(nats\) against depth"
expect "  rows condensed: H/ln n about 0.19, two thirds of each row on one key" "H/ln n=0\.1[89][0-9]? +max A=0\.6[67][0-9]?"
expect "  the note: the entropy-collapse side of beta_c" "entropy-collapse side, β = 2\.65, β_c = 1\.41"
press "> step 11: QK-norm takes it back" "Tour 11/11" ">"
expect "  rows diffuse again: H/ln n about 0.91" "H/ln n=0\.91[0-9]? +max A=0\.04[0-9]?"
quits "q quits after the tour's last steps"

# A tour step's preset where no tour is found (a binary copied elsewhere: no presets beside
# it, installed or here): the note is the file's own, and the status line says why > and <
# will not step.  With a tour directory that holds no step, > names it.
start 120 40 "env -u ATTNSCOPE_TOUR LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$TMP/no-presets' '$BIN' --preset '$(pwd)/presets/tour/02-remove-the-gap.preset' --present --no-confirm"
expect "--preset of tour step 2 without a tour: its note at once" "Point at: \(1\) the outlier is gone"
expect "  and why there is no tour" "no tour: presets/tour not found"
quits "q quits"
mkdir -p "$TMP/empty-tour"
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_TOUR='$TMP/empty-tour' '$BIN' -T 32 -d 32 -L 2 --no-confirm"
expect "computes" "computed in [0-9]+ ms"
press "> with an empty tour directory names it" "no tour: no steps in $TMP/empty-tour" ">"
quits "q quits"
finish
