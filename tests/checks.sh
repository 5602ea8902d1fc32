# shellcheck shell=bash
# The numbered checks that tests/cli and tests/tui scripts count with (through their lib.sh):
# "ok N - what", "not ok N - what", "ok N - what # SKIP why" (tests/run-all.sh counts each
# kind apart), and the total last.
checks=0
failures=0
ok() { checks=$((checks + 1)); echo "ok $checks - $1"; }
not_ok() { # description [file whose text explains it, shown under it]
    checks=$((checks + 1))
    failures=$((failures + 1))
    echo "not ok $checks - $1"
    if [ -n "${2:-}" ]; then sed 's/^/    # /' "$2"; fi
}
skip() { checks=$((checks + 1)); echo "ok $checks - $1 # SKIP $2"; } # description, why
check() { # description, command...
    local what=$1
    shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}
finish() {
    echo "$((checks - failures)) of $checks checks passed"
    [ "$failures" -eq 0 ]
}
# description, why: the script cannot run here: its one check is a skip, and it ends.
skip_script() {
    skip "$1" "$2"
    finish
    exit 0
}
