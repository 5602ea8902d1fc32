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
# stem, args...: --batch's document in stem.json and its stderr in stem.err; ok when the exit
# status is 0, else that status and the start of stderr are printed.
batch_document() {
    local stem=$1
    shift
    "$BIN" --batch "$@" >"$stem.json" 2>"$stem.err"
    local status=$?
    [ $status -eq 0 ] || echo "  $*: exit $status: $(head -c 300 "$stem.err")"
    return $status
}
finish() {
    echo "$((checks - failures)) of $checks checks passed"
    [ "$failures" -eq 0 ]
}
