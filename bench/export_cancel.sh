#!/bin/bash
# x's export cancelled, timed from --trace (a benchmark, not a test): at T = d = 1024 with
# --export-matrix, Esc 1 s into an export -> its cancelled end, then q 1 s into a second
# -> the cancelled end and the exit.  Three rounds.  Usage: BIN=build/attnscope bench/export_cancel.sh
cd "$(dirname "$0")/.." || exit 1
. tests/tui/lib.sh
for round in 1 2 3; do
    trace=$TMP/t$round.trace
    mkdir -p "$TMP/x$round"
    start 160 30 "cd '$TMP/x$round' && '$BIN' -T 1024 -d 1024 -L 1 --seed 3 --export-matrix --trace '$trace'"
    wait_for "computed in [0-9]+ ms" >/dev/null
    keys x; wait_for "directory: _" >/dev/null; keys -l "$TMP/x$round/a"; keys Enter
    wait_for "writing the export" >/dev/null; sleep 1; keys Escape
    wait_trace " export files=" >/dev/null
    awk '/ export-start /{s=$1} / export-cancel /{c=$1} / export files=/{e=$1} END{printf "esc->end %d ms (export ran %d ms before Esc)\n", e-c, c-s}' "$trace"
    keys x; wait_for "directory: _" >/dev/null; keys -l "$TMP/x$round/b"; keys Enter
    wait_for "writing the export" >/dev/null; sleep 1; keys q
    wait_file "$EXIT_FILE" >/dev/null
    awk '/ quit-cancels-export/{q=$1} / export files=-2 .*\/b/{e=$1} / quit signal=/{x=$1} END{printf "q->cancelled end %d ms, q->quit %d ms\n", e-q, x-q}' "$trace"
done
finish >/dev/null
