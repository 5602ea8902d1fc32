# shellcheck shell=bash
# Shared by the tests/tui scripts: a private tmux server per script (killed on exit),
# numbered checks printing "ok N"/"not ok N", and polling with generous timeouts instead
# of fixed sleeps, so a loaded 2-core machine only makes the tests slower, never red.
set -u
BIN=${BIN:-build/attnscope}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
SOCKET_BASE="attnscope-tui-$$-$RANDOM"
SOCKET=$SOCKET_BASE-0
sessions=0
TMP=$(mktemp -d)
TIMEOUT=${TUI_TIMEOUT:-120} # seconds for anything to appear
UTF8=$(locale -a 2>/dev/null | grep -iE '^(C|en_US)\.utf-?8$' | head -n 1)
UTF8=${UTF8:-C.UTF-8}

tm() { tmux -L "$SOCKET" -f /dev/null "$@"; }
SOCKET_DIR=${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)
cleanup() {
    tm kill-server 2>/dev/null
    rm -f "$SOCKET_DIR/$SOCKET_BASE"-*
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

. tests/checks.sh

# A new session running a shell command, on a new server: a server that is still shutting
# down cannot take the new session with it.  The command's exit status lands in $EXIT_FILE,
# so that a check of quitting can tell a clean exit from a crash.
start() { # cols rows command
    tm kill-server 2>/dev/null
    rm -f "$SOCKET_DIR/$SOCKET"
    sessions=$((sessions + 1))
    SOCKET=$SOCKET_BASE-$sessions
    EXIT_FILE=$TMP/exit-$sessions
    tm new-session -d -x "$1" -y "$2" "$3; echo \$? >'$EXIT_FILE'"
}
# Presses q and checks that the program ends with status 0 (a crash ends it too, with another
# status).
quits() { # description
    keys q
    if ! wait_file "$EXIT_FILE"; then
        screen >"$TMP/screen.txt"
        not_ok "$1 (still running after q)" "$TMP/screen.txt"
    elif [ "$(cat "$EXIT_FILE")" != 0 ]; then
        not_ok "$1 (exit status $(cat "$EXIT_FILE"))"
    else
        ok "$1"
    fi
}
screen() { tm capture-pane -p -t 0 2>/dev/null; }
shows() { screen | grep -qE -- "$1"; }  # pattern: on the screen now
absent() { ! shows "$1"; }              # pattern: not on the screen now
keys() { tm send-keys -t 0 "$@"; }

# Runs the command every `interval` seconds until it succeeds (0) or `seconds` have passed (1).
poll_until() { # seconds interval command...
    local deadline=$((SECONDS + $1)) interval=$2
    shift 2
    while [ "$SECONDS" -lt "$deadline" ]; do
        "$@" && return 0
        sleep "$interval"
    done
    return 1
}
# Polls the screen until the extended regular expression matches (0) or time runs out (1).
wait_for() { poll_until "${2:-$TIMEOUT}" 0.1 shows "$1"; } # pattern [timeout]
wait_gone() { poll_until "$TIMEOUT" 0.1 absent "$1"; }      # pattern
wait_file() { poll_until "$TIMEOUT" 0.1 test -s "$1"; }     # path: exists and is not empty
# Checks that the screen shows pattern (waiting for it); on failure the screen is printed.
expect() { # description pattern
    if wait_for "$2"; then
        ok "$1"
    else
        screen >"$TMP/screen.txt"
        not_ok "$1 (no /$2/ on the screen)" "$TMP/screen.txt"
    fi
}
# Sends keys, then expects the pattern, which must not be on the screen before the keys: a
# check that would pass without them proves nothing.
press() { # description pattern key...
    local what=$1 pattern=$2
    shift 2
    if shows "$pattern"; then
        screen >"$TMP/screen.txt"
        not_ok "$what (/$pattern/ was on the screen before the key)" "$TMP/screen.txt"
        return
    fi
    keys "$@"
    expect "$what" "$pattern"
}

# For the scripts that record a --trace in $trace, and follow the program's processes.
event_ms() { awk -v p="$1" '$0 ~ p { print $1; exit }' "$trace"; } # pattern: its first line's time
traced() { grep -sqE -- "$1" "$trace"; } # pattern: a line of the trace matches it now
wait_trace() { poll_until "$TIMEOUT" 0.05 traced "$1"; } # pattern: until a line of the trace matches
trace_lines() { wc -l <"$trace" 2>/dev/null || echo 0; }
# The newest job is done and its last frame drawn: the last event is a frame of a generation
# whose snapshot came complete (apply ... done=1), and nothing followed for half a second.
settled() {
    local deadline=$((SECONDS + TIMEOUT)) last gen lines
    while [ "$SECONDS" -lt "$deadline" ]; do
        last=$(tail -n 1 "$trace" 2>/dev/null)
        gen=$(sed -nE 's/.* frame gen=([0-9]+) .*/\1/p' <<<"$last")
        if [ -n "$gen" ] && grep -qE " apply gen=$gen .*done=1" "$trace"; then
            lines=$(trace_lines)
            sleep 0.5
            [ "$(trace_lines)" = "$lines" ] && return 0
        fi
        sleep 0.1
    done
    return 1
}
# The screen a test may compare, after settled(): the status line in its finished state
# ("computed in N ms": no job pending), the pattern given (what the last key brings), no
# long-job question up, and the same capture with no new trace line a second later (tmux has
# drawn all the program wrote).  Captures (capture-pane with the options after the pattern)
# into out; after TIMEOUT fails, with why and the last capture in out.why.
final_screen() { # out pattern [capture-pane options...]
    local out=$1 pattern=$2 deadline=$((SECONDS + TIMEOUT)) first plain again lines why
    shift 2
    while [ "$SECONDS" -lt "$deadline" ]; do
        if ! settled; then
            why="the trace never settled: no frame of a finished job last, quiet for half a second"
            break
        fi
        lines=$(trace_lines)
        first=$(tm capture-pane -p "$@" -t 0)
        plain=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$first")
        if grep -q " a long computation " <<<"$plain"; then
            why="the long-job question is up: the cost model priced the job above its bound"
            break
        elif ! grep -qE "computed in [0-9]+ ms" <<<"$plain"; then
            why="the status line never said \"computed in N ms\""
        elif ! grep -qE -- "$pattern" <<<"$plain"; then
            why="the screen never showed /$pattern/"
        else
            sleep 1
            again=$(tm capture-pane -p "$@" -t 0)
            [ "$first" = "$again" ] && [ "$(trace_lines)" = "$lines" ] &&
                printf '%s\n' "$first" >"$out" && return 0
            why="the screen or the trace kept changing across a second"
            continue
        fi
        sleep 0.2
    done
    { echo "$why"; tm capture-pane -p -t 0; } >"$out.why"
    return 1
}
pid_of_screen() { tm display-message -p -t 0 '#{pane_pid}'; }
children() { [ -n "$1" ] && ps -o pid= --ppid "$1" | tr -d ' '; }
cpu_seconds() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat" 2>/dev/null; }
# helper-pid seconds: prints a worker of the LAPACK helper once one has used that much CPU
# (CPU time, not age: a loaded machine cannot pass a short call off as the long one); fails
# when none has within TIMEOUT.
worker_past_cpu() {
    local helper=$1 least=$2 pid deadline=$((SECONDS + TIMEOUT))
    while [ -n "$helper" ] && [ "$SECONDS" -lt "$deadline" ]; do
        for pid in $(children "$helper"); do
            if awk -v t="$(cpu_seconds "$pid")" -v least="$least" 'BEGIN { exit !(t >= least) }'; then
                echo "$pid"
                return 0
            fi
        done
        sleep 0.05
    done
    return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; } # pid: no such process now
wait_process_gone() { poll_until "$TIMEOUT" 0.1 gone "$1"; } # pid

# The panels' places and heights, for a script that sets PANEL_ROWS_MIN and PLOT_ROWS_MIN and
# runs the screen with --trace "$trace".
# The panels of the last frame, one a line: number rows cols row col.
panels_of_last_frame() {
    python3 -c '
import re, sys
frames = [l for l in open(sys.argv[1]) if " frame gen=" in l]
m = re.search(r" panels=(\S*)", frames[-1]) if frames else None
text = m.group(1) if m else ""
for number, rows, cols, row, col in re.findall(r"(\d+):(\d+)x(\d+)@(\d+),(\d+)", text):
    print(number, rows, cols, row, col)
' "$trace"
}
# Every panel of the last frame is at least PANEL_ROWS_MIN rows tall.
panels_tall() {
    local n=0 number rows
    while read -r number rows _; do
        n=$((n + 1))
        [ "$rows" -ge "$PANEL_ROWS_MIN" ] || { echo "    # panel $number: $rows rows" && return 1; }
    done < <(panels_of_last_frame)
    [ "$n" -gt 0 ]
}
# Every drawn panel's plot rows, counted on the screen inside its place.
plot_rows_ok() {
    screen >"$TMP/screen.txt"
    panels_of_last_frame >"$TMP/panels.txt"
    python3 - "$TMP/screen.txt" "$TMP/panels.txt" "$PLOT_ROWS_MIN" <<'EOF'
import sys
screen = open(sys.argv[1], encoding="utf-8").read().split("\n")
least = int(sys.argv[3])
ok = True
for line in open(sys.argv[2]):
    number, rows, cols, row, col = map(int, line.split())
    cells = [(screen[r] if r < len(screen) else "").ljust(col + cols)[col:col + cols]
             for r in range(row, row + rows)]
    corner = next(((r, c.index("└")) for r, c in enumerate(cells) if "└" in c), None)
    if corner is None:
        print("    # panel %d: no x axis on the screen" % number)
        ok = False
        continue
    axis_row, axis_col = corner
    plot = sum(1 for c in cells[:axis_row] if c[axis_col] in "│┤")
    if plot < least:
        print("    # panel %d: %d plot rows" % (number, plot))
        ok = False
sys.exit(0 if ok else 1)
EOF
}
shown_count() { panels_of_last_frame | wc -l; }
count_is() { [ "$(shown_count)" = "$1" ]; }
