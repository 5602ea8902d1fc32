#!/bin/bash
# --export targets that can never work are refused before anything is computed (issue 26: 8),
# and the hidden staging directory beside the target is removed whatever happens: after a
# re-export with --conditioning (whose conditioning.csv kept it alive), after a failed write,
# and, for one a killed export left, by the next export to that target (issue 26: 7).
# "Before computing" is read from --verbose, which says "computed in" once the work is done.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused_before() { # expected-message target
    "$BIN" --batch --verbose -T 8 -d 8 -L 1 --export "$2" >"$tmp/o" 2>"$tmp/e"
    local status=$?
    [ $status -eq 2 ] && [ ! -s "$tmp/o" ] && grep -qF -- "--export '$2': $1" "$tmp/e" &&
        ! grep -q "computed in" "$tmp/e" ||
        { echo "  status $status, stderr: $(head -c 400 "$tmp/e")"; return 1; }
}
touch "$tmp/plain"
mkdir "$tmp/theirs" && echo mine >"$tmp/theirs/notes.txt"
check "--export /: exit 2 before computing" refused_before "name a directory (not ., .. or /)" /
check "--export a regular file: exit 2 before computing" refused_before "it exists and is not a directory" "$tmp/plain"
check "--export a folder holding other files: exit 2 before computing" refused_before \
    "the directory holds notes.txt, which is not a file of an export" "$tmp/theirs"
check "... the folder left as it was" test "$(ls -A "$tmp/theirs")" = notes.txt
check "--export under a regular file: exit 2 before computing" refused_before \
    "cannot create the directory $tmp/plain/sub: Not a directory" "$tmp/plain/sub/out"

nothing_hidden() { # directory: no staging directory beside its exports
    local left
    left=$(ls -A "$1" | grep '^\.' | tr '\n' ' ')
    [ -z "$left" ] || { echo "  left in $1: $left"; return 1; }
}
mkdir "$tmp/c"
conditioned() {
    "$BIN" --batch -T 8 -d 8 -L 2 --conditioning --export "$tmp/c/out" >/dev/null 2>"$tmp/e" &&
        "$BIN" --batch -T 8 -d 8 -L 2 --conditioning --export "$tmp/c/out" >/dev/null 2>>"$tmp/e" &&
        [ -f "$tmp/c/out/conditioning.csv" ] && nothing_hidden "$tmp/c"
}
check "--conditioning exported twice: no staging left beside it" conditioned
write_fails() { # a write past ulimit -f fails (EFBIG, SIGXFSZ ignored), as a full disk would
    (trap '' XFSZ && ulimit -f 1 &&
        exec "$BIN" --batch -T 48 -d 64 -L 3 --conditioning --export "$tmp/c/out" >/dev/null 2>"$tmp/e")
    [ $? -eq 1 ] && grep -q "File too large" "$tmp/e" && nothing_hidden "$tmp/c"
}
check "a failed --conditioning re-export: no staging left beside it" write_fails

# A killed export's staging: a process id that no longer exists (a child waited for), its
# directory holding export files; a live process's staging is left alone.
sleep 0 &
dead=$!
wait "$dead"
mkdir "$tmp/c/.out.export-$dead-0" "$tmp/c/.out.export-$$-0"
echo x >"$tmp/c/.out.export-$dead-0/layers.csv"
echo x >"$tmp/c/.out.export-$dead-0/conditioning.csv"
cleaned() {
    "$BIN" --batch -T 8 -d 8 -L 1 --export "$tmp/c/out" >/dev/null 2>"$tmp/e" &&
        [ ! -e "$tmp/c/.out.export-$dead-0" ] && [ -d "$tmp/c/.out.export-$$-0" ] ||
        { echo "  left: $(ls -A "$tmp/c" | tr '\n' ' ')"; return 1; }
}
check "a killed export's staging is removed by the next export there, a live one's kept" cleaned
finish
