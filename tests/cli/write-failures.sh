#!/bin/bash
# A write that fails after the run, or a signal that ends it, leaves nothing behind: the
# command exits 1 (a runtime failure, not bad input) or by its signal (128 + N), every
# directory it created is removed, an existing one's files are byte-identical, and no staging
# file stays.  An --export-weights ended by SIGTERM or SIGINT once left its temporary files
# (250 MB at -d 512) for good; the next export now also removes those a killed one left.  Of
# two --export runs racing to one new directory, the loser leaves the winner's set as it is.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
base="-T 8 -d 8 -L 2"

# Every file under each directory (hidden ones too) with its SHA-256, into the file.
fingerprint() { # file directories...
    local out=$1
    shift
    find "$@" -type f -print0 | sort -z | xargs -0 -r sha256sum >"$out" 2>&1
}
# status dir-or-!absent fragment -- command...: that exit status, the fragment on stderr, and
# the directory byte-identical (or, named with a leading !, absent) afterwards.
fails_leaving() {
    local want=$1 dir=$2 fragment=$3 status
    shift 4
    [ "${dir#!}" != "$dir" ] || fingerprint "$tmp/before" "$dir"
    "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    if [ "${dir#!}" != "$dir" ]; then
        [ ! -e "${dir#!}" ] || { echo "  ${dir#!} exists: $(ls -A "${dir#!}" | head -5)"; return 1; }
    else
        fingerprint "$tmp/after" "$dir"
        cmp -s "$tmp/before" "$tmp/after" || { diff "$tmp/before" "$tmp/after" | head -5; return 1; }
    fi
    [ $status -eq "$want" ] && grep -qF -- "$fragment" "$tmp/err" ||
        { echo "  exit $status, stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
# The command with writes limited to 64 KiB (RLIMIT_FSIZE; SIGXFSZ ignored, so a write past
# it fails with EFBIG as one on a full disk fails with ENOSPC): needs no privileges.
limited() { (trap '' XFSZ && ulimit -f 64 && exec "$@"); }

# ---- A full disk: exit 1, nothing made, nothing of the old set changed. ----------------------
# shellcheck disable=SC2086
check "--export-weights (alone) past the limit: exit 1, the directory it made removed" \
    fails_leaving 1 "!$tmp/w1" "--export-weights '$tmp/w1': writing failed" -- \
    limited "$BIN" -T 64 -d 64 -L 4 --export-weights "$tmp/w1"
# shellcheck disable=SC2086
check "--batch --export-weights past the limit: exit 1, the directory it made removed" \
    fails_leaving 1 "!$tmp/w2" "--export-weights '$tmp/w2': writing failed" -- \
    limited "$BIN" --batch -T 64 -d 64 -L 4 --export-weights "$tmp/w2"
# shellcheck disable=SC2086
check "--export --export-matrix past the limit: exit 1, the parents it made removed" \
    fails_leaving 1 "!$tmp/e1" "--export '$tmp/e1/a/b': writing" -- \
    limited "$BIN" --batch -T 64 -d 64 -L 4 --export "$tmp/e1/a/b" --export-matrix
# shellcheck disable=SC2086
if "$BIN" $base --export-weights "$tmp/old" >/dev/null 2>&1 &&
    "$BIN" --batch $base --export "$tmp/olde" >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    check "--export-weights over an earlier one past the limit: exit 1, the old files intact" \
        fails_leaving 1 "$tmp/old" "writing failed" -- \
        limited "$BIN" -T 64 -d 64 -L 4 --export-weights "$tmp/old"
    check "--export over an earlier one past the limit: exit 1, the old files intact" \
        fails_leaving 1 "$tmp/olde" "writing" -- \
        limited "$BIN" --batch -T 64 -d 64 -L 4 --export "$tmp/olde" --export-matrix
else
    not_ok "the earlier exports to write over"
fi

# The same on a real full file system: a 2 MiB tmpfs, where mounting is allowed.
mkdir "$tmp/small"
if mount -t tmpfs -o size=2M tmpfs "$tmp/small" 2>/dev/null; then
    # Unmounted however the script ends, before lib.sh's trap removes the scratch directory.
    trap 'umount "$tmp/small" 2>/dev/null; chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
    check "--export-weights on a full tmpfs: exit 1, nothing left" \
        fails_leaving 1 "!$tmp/small/w" "No space left on device" -- \
        "$BIN" -T 64 -d 256 -L 4 --export-weights "$tmp/small/w"
    check "--export --export-matrix on a full tmpfs: exit 1, nothing left" \
        fails_leaving 1 "!$tmp/small/a" "No space left on device" -- \
        "$BIN" --batch -T 256 -d 256 -L 2 --export "$tmp/small/a/e" --export-matrix
    check "... the tmpfs empty" test -z "$(ls -A "$tmp/small")"
    umount "$tmp/small"
else
    skip "--export-weights and --export on a full tmpfs" "mounting a tmpfs is not allowed here"
fi

# ---- Two exports racing to the same new directory. ------------------------------------------
# The loser, checked before its run while the directory was new, finds the winner's set there
# when it writes: it exits 1 saying the directory appeared meanwhile, the winner's files
# byte-identical (not replaced as an earlier export is).  The run is held (SIGSTOP) once
# --verbose's estimate, said after the target's check, is out, while the winner writes.
# shellcheck disable=SC2086
"$BIN" --batch $base --export "$tmp/winner" >/dev/null 2>&1
"$BIN" --batch -T 256 -d 256 -L 4 --verbose --export "$tmp/race" >"$tmp/race.out" 2>"$tmp/race.err" &
loser=$!
for _ in $(seq 1200); do grep -qF "estimate" "$tmp/race.err" && break; sleep 0.01; done
if kill -STOP "$loser" 2>/dev/null && ! grep -qF "computed in" "$tmp/race.err"; then
    cp -r "$tmp/winner" "$tmp/race"
    fingerprint "$tmp/before" "$tmp/race"
    kill -CONT "$loser"
    wait "$loser"
    status=$?
    fingerprint "$tmp/after" "$tmp/race"
    check "the loser of a race: exit 1 (got $status), saying the directory appeared meanwhile" \
        bash -c "[ $status -eq 1 ] && grep -qF -- \"--export '$tmp/race': the directory appeared while the run computed\" '$tmp/race.err'"
    check "... the winner's files byte-identical" cmp -s "$tmp/before" "$tmp/after"
else
    kill -CONT "$loser" 2>/dev/null
    wait "$loser"
    skip "two exports racing to the same new directory" "the run ended before it could be held"
fi

# ---- A signal: the temporary files removed, the status the signal's. ------------------------
# A job of its own (set -m), so that SIGINT is not ignored as it is for a script's & job.
# dir existed (and stays, empty), or with "new" the export made it (and it is gone, as after a
# failed write).
interrupted() { # signal dir [new]: ends an --export-weights into dir by the signal once it writes
    local sig=$1 dir=$2 new=${3:-} pid status seen=
    [ -n "$new" ] || mkdir -p "$dir"
    set -m
    # Without a terminal bash cannot take job control and starts & jobs with SIGINT ignored
    # (CI's case): env gives the program SIGINT's default back.
    env --default-signal=INT "$BIN" -T 64 -d 512 -L 8 --mlp swiglu --export-weights "$dir" 2>"$tmp/err" &
    pid=$!
    set +m
    # Until the model's temporary file holds data (the check then proves it is removed).
    for _ in $(seq 600); do
        [ -n "$(find "$dir" -name '.model.safetensors.*.tmp' -size +0 2>/dev/null)" ] && seen=1 && break
        sleep 0.05
    done
    kill -s "$sig" "$pid"
    wait "$pid"
    status=$?
    [ -n "$seen" ] || { echo "  no temporary file appeared within 30 s: nothing proved"; return 1; }
    if [ -n "$new" ]; then
        [ $status -eq $((128 + $(kill -l "$sig"))) ] && [ ! -e "$dir" ] ||
            { echo "  exit $status, left: $(ls -d "$dir" 2>&1) $(ls -A "$dir" 2>&1)"; return 1; }
    else
        [ $status -eq $((128 + $(kill -l "$sig"))) ] && [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] ||
            { echo "  exit $status, left: $(ls -A "$dir")"; return 1; }
    fi
}
check "--export-weights ended by SIGTERM: status 143, no temporary file left" interrupted TERM "$tmp/t"
check "--export-weights ended by SIGINT: status 130, no temporary file left" interrupted INT "$tmp/i"
check "--export-weights into a new directory ended by SIGTERM: status 143, the directory removed" \
    interrupted TERM "$tmp/tn" new

# A parent that does not exist: --export-weights makes none, and says what it accepts.
check "--export-weights under a missing parent: exit 2, what is accepted named, nothing made" \
    fails_leaving 2 "!$tmp/none" "cannot create the directory: No such file or directory (in '$tmp/none'): accepted a new directory in an existing one" -- \
    "$BIN" $base --export-weights "$tmp/none/x"

# What a killed export left (SIGKILL: nothing can run) is removed by the next export into the
# directory: only files named exactly .NAME.PID.tmp whose process no longer exists.
sh -c 'exit 0' &
dead=$!
wait $dead
mkdir "$tmp/k"
for name in ".model.safetensors.$dead.tmp" ".config.json.$dead.tmp" ".model.safetensors.$$.tmp" \
    ".model.safetensors.$dead.tmpx" ".model.safetensors.+$dead.tmp" ".other.$dead.tmp"; do
    echo x >"$tmp/k/$name"
done
# shellcheck disable=SC2086
"$BIN" $base --export-weights "$tmp/k" >/dev/null 2>&1
kept=$(printf '%s\n' ".model.safetensors.$$.tmp" ".model.safetensors.$dead.tmpx" \
    ".model.safetensors.+$dead.tmp" ".other.$dead.tmp" config.json model.safetensors | LC_ALL=C sort)
check "abandoned temporary files removed, a live process's and other names kept" test \
    "$(ls -A "$tmp/k" | LC_ALL=C sort)" = "$kept"
finish
