# shellcheck shell=bash
# Shared by the tests/cli scripts: the numbered checks (tests/checks.sh), a scratch directory,
# and the helpers several scripts run their checks through.
. tests/checks.sh
BIN=${BIN:-build/attnscope}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# The script's scratch directory, removed on exit; made writable first, since some checks
# take permissions away inside it.
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# description: AddressSanitizer reserves terabytes of shadow address space, so nothing built
# with it runs under ulimit -v: a script that limits memory is skipped for such a $BIN.
skip_script_under_asan() {
    if grep -qa __asan_init "$BIN"; then
        skip_script "$1" "$BIN is built with AddressSanitizer, which cannot run under ulimit -v"
    fi
}
# description: a script that checks against numpy is skipped without it (/usr/bin/python3's).
skip_script_without_numpy() {
    if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
        skip_script "$1" "Debian's python3-numpy is not installed (scripts/install-deps.sh check)"
    fi
}

# file: a --batch document's lines but "weights", which names the checkpoint run (its path and
# content hash): for documents of one model read from two files.
without_weights() { grep -v '^ "weights": ' "$1"; }

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
# script names...: Python over the documents $tmp/NAME.json (as d[name], warned(name, phrase)
# whether a warning holds the phrase), asserting; ok when it exits 0.  Scripts that read
# their documents otherwise define a says of their own.
says() {
    local script=$1
    shift
    "$PY" - "$tmp" "$@" <<PY
import json, math, sys
d = {n: json.load(open(f"{sys.argv[1]}/{n}.json")) for n in sys.argv[2:]}
def warned(n, phrase):
    return any(phrase in w for w in d[n]["warnings"])
$script
PY
}
# name T depth args...: --batch with args (which set T and the depth themselves) exits 0 and
# its document, $tmp/name.json, follows the contract for that T and depth.
valid_document() {
    local name=$1 T=$2 depth=$3
    shift 3
    batch_document "$tmp/$name" "$@" && "$PY" tests/cli/contract.py "$T" "$depth" <"$tmp/$name.json"
}

# run compare case...: each case, "name:args", is run on the exact conditioning path, then on
# the lanczos and kron paths (by `run name args...`, the script's own), and each of those
# documents is held to the exact one's by `compare exact-name path-name`.
paths_against_exact() {
    local run=$1 compare=$2 one name path args
    shift 2
    for one in "$@"; do
        name=${one%%:*}
        read -r -a args <<<"${one#*:}"
        check "$name: exact path" "$run" "$name-exact" "${args[@]}" --conditioning-path exact || continue
        for path in lanczos kron; do
            check "$name: $path path" "$run" "$name-$path" "${args[@]}" --conditioning-path $path &&
                "$compare" "$name-exact" "$name-$path"
        done
    done
}

# files...: merge's records, one a line, without merged_from (which names where each came
# from): the numbers, to compare with a run that gathered them otherwise.
merged_numbers() {
    "$BIN" merge "$@" | "$PY" -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    d.pop("merged_from")
    print(json.dumps(d))'
}

# status fragment... -- command args...: the command, reading nothing (stdin /dev/null), ends
# with that status, writes nothing on stdout, and its stderr ($tmp/err, left for further
# checks) holds every fragment as a fixed string; else says what it did instead.
# args...: the place of the first -- among them (one past the last where there is none)
dashes_at() {
    local i=1
    while [ $i -le $# ] && [ "${!i}" != -- ]; do i=$((i + 1)); done
    echo $i
}
ends_saying() {
    local want=$1 at s
    shift
    at=$(dashes_at "$@")
    local fragments=("${@:1:at-1}")
    shift "$at"
    "$@" >"$tmp/stdout" 2>"$tmp/err" </dev/null
    local status=$?
    if [ $status -ne "$want" ] || [ -s "$tmp/stdout" ]; then
        echo "  $*: status $status, $(wc -c <"$tmp/stdout") bytes on stdout, stderr: $(head -c 300 "$tmp/err")"
        return 1
    fi
    for s in "${fragments[@]}"; do
        grep -qF -- "$s" "$tmp/err" || { echo "  $*: stderr lacks '$s': $(head -c 300 "$tmp/err")"; return 1; }
    done
}
# fragment... -- command args...: a refusal: exit 2, nothing on stdout, every fragment on stderr.
refused() { ends_saying 2 "$@"; }
# words... -- fragment... -- args...: refused, the command being the words, then the args: a
# script whose refusals all run one command names its words once, in a refused() of its own.
refused_running() {
    local at
    at=$(dashes_at "$@")
    local words=("${@:1:at-1}")
    shift "$at"
    at=$(dashes_at "$@") # the fragments' --, kept: the words go after it
    ends_saying 2 "${@:1:at}" "${words[@]}" "${@:at+1}"
}
