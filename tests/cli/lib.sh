# Shared by the tests/cli scripts: numbered checks that print "ok"/"not ok" and a total.
BIN=${BIN:-build/attnscope}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
checks=0
failures=0
ok() { checks=$((checks + 1)); echo "ok $checks - $1"; }
not_ok() { checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok $checks - $1"; }
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
