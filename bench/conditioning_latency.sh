#!/bin/bash
# Key to the first drawn κ curve in the conditioning view (issue 14), read from --trace.
#
#     bench/conditioning_latency.sh [build/attnscope]
#
# Drives the real binary in a private tmux server (120×40, UTF-8): waits for the first job
# to be done, presses V (stable rank → conditioning view) and reports, in milliseconds on the
# program's clock, the key → the first frame drawn from a snapshot that holds the conditioning
# (apply ... conditioning=1), the cost model's estimate of that job (job-estimate) and the
# path it took (conditioning-start ... exact=).  Scenarios: the shipped preset
# skipless-cutting-skip (T = 16, d = 64, L = 12, exact path) and the default size
# (T = d = 256, L = 8, matrix-free).  Both run with --no-confirm: the default size is priced
# above the long-job question (30 s) on any machine, and the preset is too when the machine is
# busy (its price comes from the rates measured at start, Rates_measure, which a busy machine
# lowers), where the screen would stop at the question and no κ curve would come.
# --no-confirm only lifts the question (the job's confirm_above), so on a quiet machine, where
# the preset is not asked about, it measures the same as without.
# "matrix-free" is the Kronecker path where it certifies and Lanczos elsewhere: the
# warnings of a --batch --conditioning run of the same settings count the layers of each.
# Reports, never fails: timings are not tests.
set -u
BIN=${1:-build/attnscope}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
SOCKET=attnscope-bench-$$-0
TMP=$(mktemp -d)
tm() { tmux -L "$SOCKET" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
sessions=0
UTF8=$(locale -a 2>/dev/null | grep -iE '^(C|en_US)\.utf-?8$' | head -n 1)
UTF8=${UTF8:-C.UTF-8}

wait_trace() { # file pattern seconds
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

echo "| scenario | path | estimate (s) | key → first κ curve drawn (ms) |"
echo "|---|---|---:|---:|"
scenario() { # name args...
    local name=$1
    shift
    local trace=$TMP/$name.trace
    # A new server per scenario: one still shutting down loses the next session.
    tm kill-server 2>/dev/null
    sessions=$((sessions + 1))
    SOCKET=attnscope-bench-$$-$sessions
    tm new-session -d -x 120 -y 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $* --trace '$trace'"
    if ! wait_trace "$trace" "job-done gen=1 " 120; then
        echo "| $name | the first job did not finish | | |"
        return
    fi
    sleep 0.5
    tm send-keys -t 0 V
    if ! wait_trace "$trace" "apply gen=2 .*conditioning=1" 600; then
        echo "| $name | no conditioning within 600 s | | |"
        return
    fi
    sleep 0.5
    awk -v name="$name" '
        / key V gen=2/ { key = $1 }
        / conditioning-start gen=2 / { for (i = 1; i <= NF; i++) { if ($i ~ /^exact=/) path = substr($i, 7); if ($i ~ /^s=/) estimate = substr($i, 3) } }
        / apply gen=2 .*conditioning=1/ { applied = 1 }
        applied && / frame gen=2 / && !drawn { drawn = $1 }
        END { printf "| %s | %s | %.1f | %.0f |\n", name, path == "1" ? "exact" : "matrix-free", estimate, drawn - key }
    ' "$trace"
    tm send-keys -t 0 q
}
scenario "preset skipless-cutting-skip (16×64, L=12)" --preset skipless-cutting-skip --no-confirm
scenario "default (256×256, L=8)" --no-confirm
