#!/bin/bash
# An option that nothing reads is refused, not recorded in the JSON's config and ignored:
# exit 2, nothing on stdout, the message naming the option, its value, the option in its way
# and what it needs (issue 25's explorer: -a relu --sink 5 ran as if without the sink).  At
# its default an option changes nothing and passes; where it acts it passes.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

refused() { # expected-stderr-fragment... -- args...
    local says=()
    while [ "$1" != -- ]; do
        says+=("$1")
        shift
    done
    shift
    "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    local status=$? s
    if [ $status -ne 2 ] || [ -s "$tmp/out" ]; then
        echo "  $*: status $status, $(wc -c <"$tmp/out") bytes on stdout, stderr: $(head -c 300 "$tmp/err")"
        return 1
    fi
    for s in "${says[@]}"; do
        grep -qF -- "$s" "$tmp/err" || { echo "  $*: stderr lacks '$s': $(head -c 300 "$tmp/err")"; return 1; }
    done
}
accepted() { "$BIN" "$@" >"$tmp/out" 2>"$tmp/err" && [ -s "$tmp/out" ]; }
small=(-T 8 -d 8 -L 1)

check "-a relu --sink 5: refused, naming both and softmax" refused "--sink 5: ignored with -a/--attention relu" \
    "softmax attention" -- --batch "${small[@]}" -a relu --sink 5
check "-a markov --sink 5: refused" refused "--sink 5: ignored with -a/--attention markov" -- \
    --batch "${small[@]}" -a markov --sink 5
check "--sink-std without a sink: refused, saying it needs a sink" refused "--sink-std 0.1: ignored" \
    "needs a sink" -- --batch "${small[@]}" --sink-std 0.1
check "-w 2 with the full mask: accepted (a knob a sweep over masks leaves set)" accepted \
    --batch "${small[@]}" -m full -w 2
check "-a relu --sink none (the default): accepted" accepted --batch "${small[@]}" -a relu --sink none
check "--sink 1 --sink-std 0.1 with softmax: accepted" accepted --batch "${small[@]}" --sink 1 --sink-std 0.1
check "--present --batch: refused" refused "--present: accepted only without --batch" -- \
    --batch "${small[@]}" --present
check "--softmax-demo -a markov: refused, naming both" refused "-a/--attention markov: ignored with --softmax-demo" -- \
    --batch --softmax-demo -T 10 -d 10 -a markov
check "--softmax-demo --weights: refused" refused "--softmax-demo: accepted without --weights" -- \
    --batch --softmax-demo -T 10 -d 10 --weights "$tmp"
check "--softmax-demo -T 10 -d 10 --seeds 3 --init-alpha 0.1: accepted" accepted \
    --batch --softmax-demo -T 10 -d 10 --seeds 3 --init-alpha 0.1
# A preset and a --jsonl line follow the same rule, for the keys they give.
printf 'attention = relu\nsink = 5\n' >"$tmp/relu-sink.preset"
check "a preset with attention relu and sink 5: refused, naming the file" refused \
    "$tmp/relu-sink.preset: --sink 5: ignored with -a/--attention relu" -- --batch "${small[@]}" --preset "$tmp/relu-sink.preset"
jsonl_refused() {
    printf '{"attention": "markov", "sink": 5}\n' | "$BIN" --batch --jsonl "${small[@]}" >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -qF -- "line 1: --sink 5: ignored with -a/--attention markov" "$tmp/err" ||
        { echo "  stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "a --jsonl line with markov and a sink: refused" jsonl_refused
check "a --jsonl line with a sink of none and relu: accepted" bash -c \
    "printf '{\"attention\": \"relu\", \"sink\": null}\n' | '$BIN' --batch --jsonl ${small[*]} >/dev/null"
finish
