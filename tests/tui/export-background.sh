#!/bin/bash
# x's export writes on a thread of its own (src/tui/export_job.c): with --export-matrix at
# T = d = 1024 it formats 3·T² numbers (the attention matrix, the product's absence aside,
# and X0), seconds of a core, while the screen reads keys.  Checked: the status line says it
# writes; a second x is refused while it does; a setting key is answered before the export
# ends (the trace orders key and export events: writing three million numbers takes well over
# a second, so the key lands inside it on any machine); the export holds the result it was
# asked for, --batch's files byte for byte, although the key started a newer job; and a second
# export holds the newer job's whole set.  (Esc and q while it writes cancel it:
# export-cancel.sh.)
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings=(-T 1024 -d 1024 -L 1 --seed 3)
trace=$TMP/export.trace
mkdir -p "$TMP/x"
start 160 30 "cd '$TMP/x' && env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' ${settings[*]} --export-matrix --trace '$trace'"
expect "T = d = 1024 computes" "computed in [0-9]+ ms"
press "x asks for a directory" "directory: _" x
keys -l "$TMP/x/screen"
press "Enter: the status line says it writes, and where" "writing the export to .*/screen/, [0-9.]+ s" Enter
press "x again while it writes opens its prompt, saying why Enter would be refused" "still writing the last export: Enter again once it is written" x
press "Esc closes that prompt, the export still writing" "not exported" Escape
keys s
expect "it ends saying what it wrote, the words the prompt said before" "exported 10 files to .*/screen/"
key_during_export() { # the s key's event lies between the export's start and its end
    awk '/ export-start /{s=NR} / key s gen=/{k=NR} / export files=10 /{e=NR}
         END{exit !(s && k && e && s < k && k < e)}' "$trace"
}
check "the setting key was answered while the export wrote (trace order)" key_during_export
check "the export wrote the snapshot of the job asked for (generation 1)" grep -q " export-start gen=1 " "$trace"
same_files() { # dir: the files --batch writes for the settings the export was asked for
    [ -d "$TMP/x/batch" ] || "$BIN" --batch "${settings[@]}" --export "$TMP/x/batch" --export-matrix >/dev/null 2>&1 || return 1
    for f in attention_matrix.csv input.csv layers.csv eigenvalues.csv singular_values.csv; do
        cmp -s "$TMP/x/batch/$f" "$1/$f" || { echo "# $f differs" >&2; return 1; }
    done
}
check "its files are --batch's for those settings, byte for byte (not the newer job's)" same_files "$TMP/x/screen"
expect "the newer job (σ changed by s) computes" "computed in [0-9]+ ms"
press "x once the first is written" "directory: _" x
keys -l "$TMP/x/second"
press "a second export writes" "writing the export to .*/second/" Enter
expect "and ends saying what it wrote" "exported 10 files to .*/second/"
quits "q quits"
newer_settings_differ() { ! cmp -s "$TMP/x/screen/layers.csv" "$TMP/x/second/layers.csv"; }
check "the second export holds the newer job's whole set" bash -c "ls '$TMP/x/second' | wc -l | grep -qx 10"
check "which differs from the first (the newer settings)" newer_settings_differ
check "no staging directory is left beside them" bash -c "! ls -A '$TMP/x' | grep -q '^\.'"
finish
