#!/bin/bash
# x opens its directory prompt in every case, so that what is typed after it is a directory,
# never keys: during a computation (T = d = 1024, seconds of a core: the trace checks that x
# came before the result) Enter is refused, the prompt and what was typed kept; the settings
# are as they were and no preset was saved (the typed "out/tmp/ex2mid" holds t, m, p as
# keys); once the result is in, the prompt says so and Enter exports it.  A failed export
# (/proc/nope) keeps the panels where they were behind the prompt (the trace's panel places),
# its reason in the prompt's box.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

home=$TMP/home
mkdir -p "$home" "$TMP/work/out/tmp"
trace=$TMP/prompt.trace
start 120 40 "cd '$TMP/work' && env HOME='$home' XDG_CONFIG_HOME='$home/.config' LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 1024 -d 1024 --no-confirm --trace '$trace'"
expect "T = d = 1024 computes" "computing"
settings_line() { screen | grep -E '^T='; }
before=$(settings_line)
check "no prompt before x" absent "directory: "
# Typed at once, as a user types: as keys, t would halve T, m change the mask, p open the
# preset prompt and Enter save ex2mid.preset.
keys x
keys -l "out/tmp/ex2mid"
keys Enter
expect "x, a path and Enter during the computation: the prompt holds the path" \
    "directory: out/tmp/ex2mid_"
expect "  Enter was refused, saying why" "nothing to export yet: wait for the result"
x_before_result() { # the x key's event lies before the job's complete snapshot
    awk '/ key x gen=/{k=NR} / apply gen=.*done=1/{if (!d) d=NR} END{exit !(k && (!d || k < d))}' "$trace"
}
check "x came while the job computed (trace order)" x_before_result
check "no setting changed (the status line's settings as before x)" \
    eval '[ "$(settings_line)" = "$before" ]'
no_preset() { [ -z "$(find "$home" -name '*.preset' 2>/dev/null)" ]; }
check "no preset was saved" no_preset
check "no export was written" test -z "$(ls -A "$TMP/work/out/tmp")"
expect "the result comes in behind the prompt, which says Enter exports it now" \
    "the result is in: Enter exports it"
check "the typed path is still in the prompt" eval 'screen | grep -q "directory: out/tmp/ex2mid_"'
press "Enter exports it" "exported [0-9]+ files to .*out/tmp/ex2mid/" Enter
check "the files are there" test -s "$TMP/work/out/tmp/ex2mid/layers.csv"
check "still the settings of before x" eval '[ "$(settings_line)" = "$before" ]'
check "still no preset" no_preset
quits "q quits"

# The attention map behind a failed export: the panels' places of the last frame before x,
# and after the refusal (a long note: in the status line too, it took a line more).
trace=$TMP/failed.trace
start 120 40 "cd '$TMP/work' && env HOME='$home' LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 --trace '$trace'"
expect "T = d = 16 computes" "computed in [0-9]+ ms"
keys v v v v v
expect "v five times: the attention map" "attention map A"
check "  and its job is done" settled
places_before=$(panels_of_last_frame)
press "x opens the prompt" "directory: _" x
keys -l "/proc/nope"
press "Enter: the export fails, saying why in the prompt" "export failed: " Enter
check "  its frame drawn" settled
check "  and the prompt stays open" eval 'screen | grep -q "directory: /proc/nope_"'
check "the panels behind it are where they were" eval '[ "$(panels_of_last_frame)" = "$places_before" ]'
keys Escape
check "Esc closes the prompt" wait_gone "directory: "
quits "q quits"
finish
