#!/bin/bash
# The terminal tests' own checks can fail: a crash on q, and a pattern that was on the screen
# before the key, each give "not ok" (run against a small stand-in program, not attnscope).
cd "$(dirname "$0")/../.." || exit 1
source tests/tui/lib.sh

# Runs one check of lib.sh in a subshell and reports whether it said "not ok".
says_not_ok() { # function args...
    local out
    out=$(TIMEOUT=30 "$@")
    grep -q '^not ok' <<<"$out"
}
says_ok() { # function args...
    local out
    out=$(TIMEOUT=30 "$@")
    grep -q '^ok' <<<"$out" && ! grep -q '^not ok' <<<"$out"
}
raw_key_then() { # shell command run after one key
    echo "stty raw -echo; head -c1 >/dev/null; $1"
}

start 80 24 "sh -c '$(raw_key_then "kill -SEGV \$\$")'"
wait_for "^" 10
check "quits: a program killed by a signal on q fails the check" says_not_ok quits "crash"
start 80 24 "sh -c '$(raw_key_then "exit 3")'"
check "quits: a program that exits 3 on q fails the check" says_not_ok quits "exit 3"
start 80 24 "sh -c '$(raw_key_then "exit 0")'"
check "quits: a clean exit passes" says_ok quits "clean"
start 80 24 "sh -c 'echo ALREADY-HERE; $(raw_key_then "sleep 10")'"
expect "the stand-in printed its text" "ALREADY-HERE"
check "press: a pattern on the screen before the key fails the check" says_not_ok press "stale" "ALREADY-HERE" x
finish
