#!/bin/bash
# Every signal that ends the screen gives the terminal back (issue 26): out of the
# alternate screen, the cursor shown, mouse reporting off (tmux's own view of the pane's
# modes).  A fault (SEGV) once left mouse reporting on; QUIT, USR1, ALRM, PIPE and XCPU left
# everything as the screen had it.  The process still dies by its signal (status 128 + N).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

modes() { tm display-message -p -t 0 '#{alternate_on} #{cursor_flag} #{mouse_any_flag}'; }

for sig in SEGV QUIT USR1 ALRM PIPE XCPU; do
    # The shell stays after the program so that the pane, and its modes, can be read.
    start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2; echo \$? >'$TMP/status'; sleep 600"
    rm -f "$TMP/status"
    expect "$sig: the screen runs" "computed in [0-9]+ ms"
    check "$sig: alternate screen, cursor hidden, mouse reported while it runs" \
        test "$(modes)" = "1 0 1"
    program=$(children "$(pid_of_screen)")
    kill -s "$sig" "$program"
    wait_file "$TMP/status"
    number=$(kill -l "$sig")
    check "$sig: the program died by it (status $((128 + number)))" \
        test "$(cat "$TMP/status")" = $((128 + number))
    got=$(modes)
    check "$sig: the terminal given back: main screen, cursor shown, no mouse (got $got)" \
        test "$got" = "0 1 0"
done
finish
