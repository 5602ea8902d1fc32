#!/bin/bash
# An --export ended by SIGTERM, SIGINT or SIGHUP while it writes: its hidden staging directory
# (.DIR.export-PID-N beside DIR) is emptied and removed before the signal ends the process
# (status 128 + N), and DIR holds what it held: nothing where it was new (nor the parents it
# made), an earlier export's files byte for byte where it existed.  --export-matrix at
# T = 1024 writes 45 MB, so the export is caught while attention_matrix.csv grows in the
# staging directory.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

# signal dir: ends --export-matrix --export dir by the signal once the staging directory's
# matrix holds data; ok when the status is the signal's and no staging directory is left.
interrupted() {
    local sig=$1 dir=$2 pid status seen="" staged
    set -m
    # Without a terminal bash starts & jobs with SIGINT ignored: env gives its default back.
    env --default-signal=INT "$BIN" --batch -T 1024 -d 1024 -L 1 --export-matrix \
        --export "$dir" >/dev/null 2>"$tmp/err" &
    pid=$!
    set +m
    for _ in $(seq 1200); do
        staged=$(find "$(dirname "$dir")" -path "*/.$(basename "$dir").export-$pid-*/attention_matrix.csv" -size +0 2>/dev/null)
        [ -n "$staged" ] && seen=1 && break
        sleep 0.05
    done
    kill -s "$sig" "$pid"
    { wait "$pid"; } 2>/dev/null
    status=$?
    [ -n "$seen" ] || { echo "  no staged matrix appeared within 60 s: nothing proved"; return 1; }
    left=$(find "$(dirname "$dir")" -maxdepth 1 -name ".$(basename "$dir").export-*")
    [ $status -eq $((128 + $(kill -l "$sig"))) ] && [ -z "$left" ] ||
        { echo "  exit $status, left: $left $(ls -A "$left" 2>/dev/null | tr '\n' ' ')"; return 1; }
}

mkdir "$tmp/new"
for sig in TERM INT HUP; do
    check "--export into a new directory ended by SIG$sig: status $((128 + $(kill -l $sig))), no staging directory left" \
        interrupted $sig "$tmp/new/out-$sig"
    check "  and no directory where it was to go" test ! -e "$tmp/new/out-$sig"
done

# The directories --export made above a new target (mkdir -p) go with it: none is left.
mkdir "$tmp/parents"
check "--export into new parents p/a/b ended by SIGTERM: status 143, no staging directory left" \
    interrupted TERM "$tmp/parents/p/a/b/out"
check "  and none of the parents it made" test ! -e "$tmp/parents/p"

# An earlier export stays whole, byte for byte.
mkdir "$tmp/old"
check "an export to replace" batch_document "$tmp/first" -T 16 -d 16 -L 2 --export "$tmp/old/out"
cp -r "$tmp/old/out" "$tmp/copy"
check "an --export over it ended by SIGTERM leaves no staging directory" interrupted TERM "$tmp/old/out"
check "  and the earlier export's files as they were" diff -r "$tmp/copy" "$tmp/old/out"

# A file of the user's in the staging directory (only the names we created are removed): the
# directory stays with it, the export's own files gone.
mkdir "$tmp/user"
user_file() { # the user's file put into the staging directory while the export writes
    local pid seen="" staged status
    set -m
    env --default-signal=INT "$BIN" --batch -T 1024 -d 1024 -L 1 --export-matrix \
        --export "$tmp/user/out" >/dev/null 2>"$tmp/err" &
    pid=$!
    set +m
    for _ in $(seq 1200); do
        staged=$(find "$tmp/user" -path "*/.out.export-$pid-*/attention_matrix.csv" -size +0 2>/dev/null)
        [ -n "$staged" ] && seen=1 && break
        sleep 0.05
    done
    [ -n "$seen" ] || { echo "  no staged matrix appeared within 60 s"; kill "$pid"; wait "$pid"; return 1; }
    echo mine >"$(dirname "$staged")/notes.txt"
    kill -s TERM "$pid"
    { wait "$pid"; } 2>/dev/null
    status=$?
    [ $status -eq 143 ] && [ "$(ls -A "$(dirname "$staged")")" = notes.txt ] ||
        { echo "  exit $status, left: $(ls -A "$(dirname "$staged")" 2>&1 | tr '\n' ' ')"; return 1; }
}
check "a file of the user's in the staging directory stays, with the directory, the export's removed" user_file
finish
