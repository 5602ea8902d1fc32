#!/bin/bash
# A --trace that cannot be written (a full disk: /dev/full) is said when the screen ends, and
# the exit status is 1: the lines were lost, where it once exited 0 with the trace silently
# empty.  A trace written whole ends with status 0 and no such message.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# trace-path: the screen with that --trace, quit by q once it has computed; its stderr in
# $TMP/err, its exit status in $EXIT_FILE.
run_and_quit() {
    start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 -d 16 -L 2 --trace '$1' 2>'$TMP/err'"
    wait_for "computed in [0-9]+ ms" && keys q && wait_file "$EXIT_FILE"
}
if run_and_quit /dev/full; then
    check "--trace /dev/full: exit status 1 (got $(cat "$EXIT_FILE"))" test "$(cat "$EXIT_FILE")" = 1
    check "... the loss said, naming --trace and the path" \
        grep -qF -- "--trace '/dev/full': writing failed, lines lost: No space left on device" "$TMP/err"
else
    not_ok "--trace /dev/full: the screen did not compute and quit"
fi
if run_and_quit "$TMP/trace"; then
    check "--trace to a file: exit status 0 (got $(cat "$EXIT_FILE")), nothing said" \
        test "$(cat "$EXIT_FILE")" = 0 -a ! -s "$TMP/err"
    check "... its lines written, the last the quit" test "$(tail -n 1 "$TMP/trace" | cut -d' ' -f2)" = quit
else
    not_ok "--trace to a file: the screen did not compute and quit"
fi
finish
