#!/bin/bash
# Golden screens (ttyplot's method): the real binary in tmux at 80×24, 100×30, 120×40 and
# 200×60, in UTF-8 and ASCII (LANG=C), with colour and with NO_COLOR, captured with their attributes
# (capture-pane -e) and compared with the files in tests/tui/golden/.  Any change of layout
# fails until the expected files are regenerated on purpose:
#     tests/tui/golden.sh --update        (or: make golden-update)
# then review `git diff tests/tui/golden/` and commit it.
# Each terminal goes through steps: the default screen, then keys (presentation mode, a tour
# step with its caption, one panel zoomed, the help), captured after each; two more start on
# a small cutting-skip stack and go to the conditioning view and its compare view, and eight
# on a causal stack go to the attention map and its product.  A capture waits
# for the keys to be read, the job done and drawn (the trace's events), the status line's
# finished state and the step's own text, then for the same capture a second later; the
# timing ("computed in N ms") is masked, and the attributes are written in a canonical form.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
. tests/blas-kernel.sh
if ! pin_blas_kernel; then
    skip "golden screens" "$blas_kernel_missing"
    finish
    exit
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
update=false
[ "${1:-}" = --update ] && update=true
dir=tests/tui/golden
mkdir -p "$dir"

# name keys: the steps, in order, each after the ones before it.
STEPS=("default:" "present:Z" "tour:>" "zoom:z" "help:?")
CONDITIONING_STEPS=("conditioning:V" "conditioning-compare:c")
# The attention map (V V from the first view: the one before the conditioning, whose Lanczos path
# is pinned so that passing it asks nothing) of a causal mask at depth 8, lower-
# triangular, then (y) the product A_8⋯A_1 with the first-token sink in its first column and
# its column mass under it.
MAP_STEPS=("map:VV" "map-product:y")
MAP_ARGS="-T 48 -d 48 -L 8 -l 8 --mask causal -n ln --conditioning-path lanczos"
# The entropy view (v four times from the stable rank): entropies against depth, the row
# entropies' histogram, the readouts on the status line.
ENTROPY_STEPS=("entropy:vvvv")
ENTROPY_ARGS="-T 32 -d 32 -L 4"
# The help alone, where its layout is tightest (80×24: a setting's two keys share a line).
HELP_STEPS=("help:?")
# The : line open, a setting's name completed by Tab and what it accepts under it.
SETLINE_STEPS=("setline::rope-sc"$'\t')
# Small enough for the exact path in a second: T·d = 256.
CONDITIONING_ARGS="-T 16 -d 16 -L 4 --init cutting-skip -n rms --conditioning-path exact"
# What each step's final screen shows that the one before it did not (final_screen waits
# for it, with the finished status line): the default screen is the first job's.
declare -A FINAL=(
    [default]="computed in" [present]="presentation mode on" [tour]="Tour 1/"
    [zoom]="full screen \(z: next" [help]="Esc, \? or q closes" [setline]=":rope-scaling"
    [conditioning]="view: conditioning" [conditioning-compare]="compare view on"
    [map]="view: attention map" [map-product]="attention product A_" [entropy]="view: entropy"
)
# The full set of steps at 120×40 in UTF-8 with colour and at 80×24 in ASCII without; the
# default screen and presentation mode at every size and mode; a presentation-mode tour step
# at 100×30, where presentation mode leaves the histogram out.
TERMINALS=(
    "120x40 utf8 color 5" "80x24 ascii nocolor 5"
    "80x24 utf8 color 2" "80x24 utf8 nocolor 2" "80x24 ascii color 2"
    "120x40 utf8 nocolor 2" "120x40 ascii color 2" "120x40 ascii nocolor 2"
    "200x60 utf8 color 2" "200x60 utf8 nocolor 2" "200x60 ascii color 2" "200x60 ascii nocolor 2"
    "120x40 utf8 color 2 conditioning" "80x24 ascii nocolor 2 conditioning"
    "80x24 utf8 color 1 help" "80x24 utf8 color 1 setline"
    "100x30 utf8 color 3"
    "80x24 utf8 color 2 map" "80x24 utf8 nocolor 2 map" "80x24 ascii color 2 map"
    "80x24 ascii nocolor 2 map" "120x40 utf8 color 2 map" "120x40 utf8 nocolor 2 map"
    "120x40 ascii color 2 map" "120x40 ascii nocolor 2 map"
    "120x40 utf8 color 1 entropy" "80x24 utf8 color 1 entropy" "80x24 ascii nocolor 1 entropy"
)

# The capture in a form that depends on the screen only, not on how curses chose to update
# it: each line's text with its attributes re-emitted where they change between visible
# characters (a blank's attributes depend on which cells curses rewrote, not on the layout).
# The timing is masked, and so is the status text it pushes off the end of the line (a
# number of one more digit cuts the line one character earlier); the blanks before the
# right-aligned hint are counted as two.
canonical() {
    "$PY" -c '
import re, sys
SGR = re.compile(r"\x1b\[([0-9;]*)m")
for line in sys.stdin.read().split("\n"):
    cells, attrs, i = [], {}, 0
    while i < len(line):
        m = SGR.match(line, i)
        if m:
            codes = [int(c) if c else 0 for c in m.group(1).split(";")]
            k = 0
            while k < len(codes):
                c = codes[k]
                if c == 0:
                    attrs = {}
                elif c in (38, 48) and k + 2 < len(codes) and codes[k + 1] == 5:
                    attrs["fg" if c == 38 else "bg"] = "%d;5;%d" % (c, codes[k + 2])
                    k += 2
                elif c in (39, 49):
                    attrs.pop("fg" if c == 39 else "bg", None)
                elif 30 <= c <= 37 or 90 <= c <= 97:
                    attrs["fg"] = str(c)
                elif 40 <= c <= 47 or 100 <= c <= 107:
                    attrs["bg"] = str(c)
                elif c == 22:
                    attrs.pop("1", None)
                else:
                    attrs[str(c)] = str(c)
                k += 1
            i = m.end()
            continue
        cells.append((line[i], tuple(sorted(attrs.values()))))
        i += 1
    text = "".join(c for c, _ in cells)
    m = re.search(r"computed in [0-9]+ ms", text)
    if m:
        ellipsis = max(text.rfind("…"), text.rfind("..."))
        cut = text.rfind(" | ", 0, ellipsis) if ellipsis > m.end() else -1
        if cut >= m.end():
            end = ellipsis + (1 if text[ellipsis] == "…" else 3)
            del cells[cut + 3:end]
        start = m.start() + len("computed in ")
        digits = len(m.group(0)) - len("computed in  ms")
        cells[start:start + digits] = [("#", cells[start][1])]
        # The right-aligned hint sits one column further for each digit the mask took.
        text = "".join(c for c, _ in cells)
        runs = list(re.finditer(r" {3,}(?=\S)", text[m.start():]))
        if runs:
            gap = max(runs, key=lambda r: len(r.group(0)))
            at = m.start() + gap.start()
            cells[at:at + len(gap.group(0))] = [(" ", ())] * 2
    out, shown = [], ()
    for char, a in cells:
        a = () if char == " " else a
        if a != shown:
            out.append("\x1b[%sm" % ";".join(("0",) + a))
            shown = a
        out.append(char)
    if shown:
        out.append("\x1b[0m")
    print("".join(out).rstrip())
'
}

keys_read() { [ "$(grep -c ' key ' "$trace")" -ge "$1" ]; } # count: the trace's key lines
for t in "${TERMINALS[@]}"; do
    read -r size charset colour steps set <<<"$t"
    args="-T 32 -d 32 -L 3"
    steps_of=("${STEPS[@]}")
    if [ "${set:-}" = conditioning ]; then
        args=$CONDITIONING_ARGS
        steps_of=("${CONDITIONING_STEPS[@]}")
    elif [ "${set:-}" = map ]; then
        args=$MAP_ARGS
        steps_of=("${MAP_STEPS[@]}")
    elif [ "${set:-}" = help ]; then
        steps_of=("${HELP_STEPS[@]}")
    elif [ "${set:-}" = setline ]; then
        steps_of=("${SETLINE_STEPS[@]}")
    elif [ "${set:-}" = entropy ]; then
        args=$ENTROPY_ARGS
        steps_of=("${ENTROPY_STEPS[@]}")
    fi
    cols=${size%x*} rows=${size#*x}
    locale=$UTF8
    [ "$charset" = ascii ] && locale=C
    # The cost model's rates pinned: a loaded machine's start measures them slow, and a step
    # priced above the long-job bound would ask first (another screen).
    env="LANG=$locale LC_ALL=$locale ATTNSCOPE_PRESETS='$(pwd)/presets' ATTNSCOPE_GFLOPS=10"
    [ "$colour" = nocolor ] && env="$env NO_COLOR=1"
    trace="$TMP/$size-$charset-$colour-${set:-}.trace"
    start "$cols" "$rows" "env $env '$BIN' $args --trace '$trace'"
    # The first key waits for the first job to be drawn (a set without a default capture).
    settled || not_ok "$size $charset $colour ${set:-}: the first screen did not settle"
    for ((i = 0; i < steps; i++)); do
        name=${steps_of[i]%%:*} key=${steps_of[i]#*:}
        case_name="$size-$charset-$colour-$name"
        # The program has read every key of the step (the trace has a line for each) before
        # the screen can be its final one.
        if [ -n "$key" ]; then
            want=$(($(grep -c ' key ' "$trace") + ${#key}))
            keys "$key"
            if ! poll_until "$TIMEOUT" 0.1 keys_read "$want"; then
                not_ok "$case_name: the program read $(grep -c ' key ' "$trace") keys of $want in ${TIMEOUT}s"
                continue
            fi
        fi
        if ! final_screen "$TMP/$case_name.raw" "${FINAL[$name]}" -e; then
            not_ok "$case_name: no final screen in ${TIMEOUT}s (trace: $trace)" "$TMP/$case_name.raw.why"
            continue
        fi
        canonical <"$TMP/$case_name.raw" >"$TMP/$case_name.txt"
        expected="$dir/$case_name.txt"
        if $update; then
            cp "$TMP/$case_name.txt" "$expected"
            ok "$case_name: written"
        elif [ ! -f "$expected" ]; then
            not_ok "$case_name: no $expected (tests/tui/golden.sh --update writes it)"
        elif cmp -s "$TMP/$case_name.txt" "$expected"; then
            ok "$case_name"
        else
            diff "$expected" "$TMP/$case_name.txt" | sed 's/\x1b/^[/g' | head -n 40 >"$TMP/diff.txt"
            not_ok "$case_name differs from $expected (regenerate on purpose: make golden-update)" "$TMP/diff.txt"
        fi
    done
    # q closes the help when it is open (the last step may be the help), then quits.
    if [ "${steps_of[-1]%%:*}" = help ] && [ "$steps" -eq "${#steps_of[@]}" ]; then
        keys q
        wait_gone "attnscope keys" || true
    fi
    # Esc closes the : line (a q there would be typed into it).
    [ "${set:-}" = setline ] && keys Escape
    quits "$size $charset $colour: q quits, exit status 0"
done
finish
