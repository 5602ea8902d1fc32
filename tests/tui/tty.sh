#!/bin/bash
# Leaving: q, SIGINT (Ctrl-C), SIGTERM and SIGHUP restore the terminal (stty -g before ==
# after), with exit status 0 or death by that signal; so does a crash (SIGSEGV, SIGBUS,
# SIGFPE, SIGILL, SIGABRT sent from outside: no crash button in the product), which also
# leaves the alternate screen and dies by its signal; out of memory is a message in the
# status line; q during a long T = 2048 layer does
# not wait for it, and the status line follows keys while that layer runs.  --trace
# writes the events latency is measured from; no terminal or a bad trace path exit 2.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

# Runs a command in the pane between two `stty -g`, recording its exit status.
cat >"$TMP/wrap.sh" <<'WRAP'
#!/bin/bash
trap : INT
ulimit -c 0 # the crash checks leave no core file behind
out=$1
shift
stty -g >"$out.before"
"$@"
status=$?
stty -g >"$out.after"
echo "$status" >"$out.status"
echo "wrapper: exit status $status"
WRAP

run_wrapped() { # name args...
    local name=$1
    shift
    start 120 40 "bash '$TMP/wrap.sh' '$TMP/$name' env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $*"
}
same_tty() { cmp -s "$TMP/$1.before" "$TMP/$1.after"; }
status_is() { [ "$(cat "$TMP/$1.status")" = "$2" ]; }
program_pid() { # the pane's topmost attnscope process (its LAPACK helper is its child)
    ps -eo pid=,ppid=,comm= | awk -v root="$(tm display-message -p -t 0 '#{pane_pid}')" '
        { parent[$1] = $2; name[$1] = $3 }
        END {
            for (p in name) {
                if (name[p] != "attnscope" || name[parent[p]] == "attnscope") continue
                for (q = parent[p]; q > 1; q = parent[q]) if (q == root) { print p; exit }
            }
        }'
}
tty_changed() { # while the screen runs, the tty is not in its first state
    [ "$(stty -g -F "$(tm display-message -p -t 0 '#{pane_tty}')")" != "$(cat "$TMP/$1.before")" ]
}

run_wrapped q -L 3
expect "q: the screen runs" "computed in [0-9]+ ms"
check "q: the screen changed the tty modes while running" tty_changed q
keys q
check "q: exits" wait_file "$TMP/q.status"
check "q: exit status 0" status_is q 0
check "q: stty -g unchanged" same_tty q

run_wrapped int -L 3
expect "SIGINT: the screen runs" "computed in [0-9]+ ms"
keys C-c
check "SIGINT (Ctrl-C): exits" wait_file "$TMP/int.status"
check "SIGINT: dies by SIGINT (status 130)" status_is int 130
check "SIGINT: stty -g unchanged" same_tty int

for sig in TERM HUP; do
    run_wrapped "$sig" -L 3
    expect "SIG$sig: the screen runs" "computed in [0-9]+ ms"
    kill -s "$sig" "$(program_pid)"
    check "SIG$sig: exits" wait_file "$TMP/$sig.status"
    check "SIG$sig: dies by it" status_is "$sig" $((128 + $(kill -l "$sig")))
    check "SIG$sig: stty -g unchanged" same_tty "$sig"
done

# A crash, sent from outside.  The pane stays after the program ends, so the check sees
# whether the screen was given back: the wrapper's last line on the shell's own screen,
# no panel left over.
for sig in SEGV BUS FPE ILL ABRT; do
    run_wrapped "$sig" -L 3
    tm set-option -w -t 0 remain-on-exit on
    expect "SIG$sig: the screen runs" "computed in [0-9]+ ms"
    kill -s "$sig" "$(program_pid)"
    check "SIG$sig: exits" wait_file "$TMP/$sig.status"
    check "SIG$sig: dies by it (status $((128 + $(kill -l "$sig"))), the real one)" status_is "$sig" $((128 + $(kill -l "$sig")))
    check "SIG$sig: stty -g unchanged" same_tty "$sig"
    expect "SIG$sig: back on the shell's screen" "wrapper: exit status"
    check "SIG$sig: no panel left on the screen" wait_gone "computed in|eigenvalues"
done

# Out of memory in the screen: under an address-space limit a T = d = 2048 job fails, the
# status line says why and for which configuration, keys still work, q leaves the tty as
# it was (one BLAS thread: see tests/cli/limits.sh).  Not checked: that a smaller job then
# completes; near the limit OpenBLAS may wait forever for a buffer inside the library.
# (--no-confirm: t's job may be priced above 30 s on a busy machine, and would ask.)
start 140 40 "ulimit -v 400000; OPENBLAS_NUM_THREADS=1 bash '$TMP/wrap.sh' '$TMP/oom' env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 2048 -d 2048 -L 2 --max-memory 100G --no-confirm"
expect "out of memory: the status line names the configuration" "error: out of memory for T = 2048, d = 2048, depth 2"
press "out of memory: keys still work" "T=1024 +d=2048" t
keys q
check "out of memory: q exits" wait_file "$TMP/oom.status"
check "out of memory: exit status 0" status_is oom 0
check "out of memory: stty -g unchanged" same_tty oom

# A T = 2048 layer takes seconds: keys are handled while it runs, q does not wait for it.
# (--no-confirm: on a busy machine the L keys' jobs are estimated above 30 s and would ask.)
trace=$TMP/long.trace
run_wrapped long -T 2048 -d 2048 -L 2 --no-confirm --trace "$trace"
expect "T=2048: busy indicator" "computing [0-9]+%"
keys L L L
expect "T=2048: the status follows keys during the first layer" "T=2048 +d=2048 +L=5"
first_layer_after_keys() {
    awk '/^[0-9.]+ key L gen=4/ { key = NR } /^[0-9.]+ frame gen=4/ && key && !frame { frame = NR }
         /^[0-9.]+ layer gen=1 / && !layer { layer = NR }
         END { exit !(key && frame && (!layer || frame < layer)) }' "$trace"
}
check "T=2048: the third key was drawn before the first job's first layer ended" first_layer_after_keys
keys q
check "T=2048: q exits in the middle of a layer" wait_file "$TMP/long.status"
check "T=2048: exit status 0" status_is long 0
check "T=2048: stty -g unchanged" same_tty long
check "T=2048: the abandoned job never finished" bash -c "! grep -q 'job-done gen=1 ' '$trace'"

# The trace of an ordinary session, and the latencies it gives.
trace=$TMP/session.trace
run_wrapped session -L 4 --trace "$trace"
expect "trace: the screen runs" "computed in [0-9]+ ms"
press "trace: a key" "T=512" T
expect "trace: its result" "computed in [0-9]+ ms"
press "trace: another key" "gap=center" g
expect "trace: its result" "computed in [0-9]+ ms"
keys q
check "trace: exits" wait_file "$TMP/session.status"
for event in start key job-start layer apply frame job-done quit; do
    check "trace: has '$event' events" grep -qE "^[0-9]+\.[0-9]{3} $event( |$)" "$trace"
done
# shellcheck disable=SC2016 # awk's own $1
check "trace: monotonic timestamps" awk '$1 < last { exit 1 } { last = $1 }' "$trace"
# keystroke -> the frame showing the new status, and -> the first frame with its spectra.
awk '/ key [^ ]+ gen=/ { split($NF, g, "="); if (g[2] != last) { key[g[2]] = $1; last = g[2] } }
     / frame gen=/ { split($3, g, "="); split($4, s, "=")
         if (g[2] in key && !(g[2] in status)) status[g[2]] = $1 - key[g[2]]
         if (g[2] in key && s[2] == g[2] && $5 == "spectra=1" && !(g[2] in plot)) plot[g[2]] = $1 - key[g[2]] }
     END { for (k in key) printf "# gen %s: keystroke->status %.1f ms, keystroke->plot %.1f ms\n", k, status[k], plot[k] }' "$trace"

no_terminal() {
    "$BIN" </dev/null >"$TMP/nt.out" 2>"$TMP/nt.err"
    [ $? -eq 2 ] && grep -q "needs a terminal" "$TMP/nt.err" && [ ! -s "$TMP/nt.out" ]
}
check "no terminal: exit 2 with a message" no_terminal
bad_trace() {
    start 100 30 "'$BIN' --trace /nonexistent/dir/trace.txt 2>'$TMP/bt.err'; echo \$? >'$TMP/bt.status'"
    wait_file "$TMP/bt.status" && [ "$(cat "$TMP/bt.status")" = 2 ] &&
        grep -q "trace '/nonexistent/dir/trace.txt'" "$TMP/bt.err"
}
check "unwritable --trace: exit 2 naming the option and the value" bad_trace
finish
