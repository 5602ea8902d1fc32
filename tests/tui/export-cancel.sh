#!/bin/bash
# x's export is cancelled by Esc while it writes, and by quitting (src/tui/export_job.c): with
# --export-matrix at T = d = 1024 it formats 3·T² numbers, seconds of a core, so the keys land
# inside it on any machine (a key that came after its end would show in the trace as a whole
# export, files=10, and fail the checks).  Checked: the status line offers Esc while it
# writes; Esc ends it with "export cancelled", the trace saying it ended cancelled (files=-2)
# after the key; the directory it would have replaced still holds the earlier export, byte for
# byte; no staging directory is left; and q during a second export into a new directory quits
# at once, cancelling it (the trace orders quit, cancelled end, exit; the directory is not
# made), exit status 0, and stderr says so.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings=(-T 1024 -d 1024 -L 1 --seed 3)
trace=$TMP/export-cancel.trace
mkdir -p "$TMP/x"
# The earlier export the cancelled one would have replaced: other settings, another set.
"$BIN" --batch -T 32 -d 32 -L 1 --export "$TMP/x/kept" >/dev/null 2>&1
cp -r "$TMP/x/kept" "$TMP/before"
check "an earlier export is there to keep" test -s "$TMP/before/layers.csv"
start 160 30 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${settings[*]} --export-matrix --trace '$trace' 2>'$TMP/stderr'"
expect "T = d = 1024 computes" "computed in [0-9]+ ms"
press "x asks for a directory" "directory: _" x
keys -l "$TMP/x/kept"
press "Enter: it writes, and the status line says Esc cancels" "writing the export to .*/kept/, [0-9.]+ s \(Esc cancels\)" Enter
press "Esc: the status line says it was cancelled and the directory kept" "export cancelled: .*/kept/ left as it was" Escape
check "the trace: started, Esc, then ended cancelled (files=-2)" awk '/ export-start /{s=NR} / export-cancel /{c=NR} / export files=-2 .*kept/{e=NR} END{exit !(s && c && e && s < c && c < e)}' "$trace"
check "the export did not complete (no files=10 in the trace)" bash -c "! grep -q ' export files=10 ' '$trace'"
check "the directory holds the earlier export, byte for byte" diff -r "$TMP/before" "$TMP/x/kept"
check "no staging directory is left" bash -c "! ls -A '$TMP/x' | grep -q '^\.'"

press "x again once it is cancelled" "directory: _" x
keys -l "$TMP/x/new"
press "a second export writes" "writing the export to .*/new/" Enter
keys q
if wait_file "$EXIT_FILE" && [ "$(cat "$EXIT_FILE")" = 0 ]; then ok "q quits"; else not_ok "q quits"; fi
check "quitting cancelled the export (trace order: quit, cancelled end, exit)" awk '/ quit-cancels-export/{q=NR} / export files=-2 .*new/{e=NR} / quit signal=/{x=NR} END{exit !(q && e && x && q < e && e < x)}' "$trace"
check "the new directory was not made" test ! -e "$TMP/x/new"
check "nor a staging directory left" bash -c "! ls -A '$TMP/x' | grep -q '^\.'"
check "stderr says the export was cancelled by quitting" grep -q "the export to .*/new/ was cancelled by quitting" "$TMP/stderr"
finish
