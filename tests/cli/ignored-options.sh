#!/bin/bash
# Options that would be accepted and then ignored are refused: exit 2, nothing on stdout, the
# message naming both options and what is accepted.  A sink with another attention than
# softmax (issue 25's explorer: -a relu --sink 5 ran as if without the sink) is a rule of
# Config_validate, so presets, --jsonl lines and the % key (tests/test_keys.c) follow it;
# --present with --batch; --softmax-demo with a setting it does not read or a checkpoint.  At
# its default an option changes nothing and passes; knobs that sweeps leave set pass.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused() { refused_running "$BIN" -- "$@"; } # expected-stderr-fragment... -- args...
accepted() { "$BIN" "$@" >"$tmp/out" 2>"$tmp/err" && [ -s "$tmp/out" ]; }
small=(-T 8 -d 8 -L 1)

check "-a relu --sink 5: refused, naming both and softmax" refused \
    "--sink 5: accepted only with softmax attention (the sink joins the softmax's denominator), not -a/--attention relu; use --sink none" \
    -- --batch "${small[@]}" -a relu --sink 5
check "-a markov --sink 0.5: refused" refused "--sink 0.5: accepted only with softmax attention" \
    "not -a/--attention markov" -- --batch "${small[@]}" -a markov --sink 0.5
check "-w 2 with the full mask: accepted (a knob a sweep over masks leaves set)" accepted \
    --batch "${small[@]}" -m full -w 2
check "--sink-std without a sink: accepted too (the sinks' spread, a knob like the window)" accepted \
    --batch "${small[@]}" --sink-std 0.1
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
# A preset and a --jsonl line follow the same rule (Config_validate's); the screen's keys too
# (tests/test_keys.c: % stops).
printf 'attention = relu\nsink = 5\n' >"$tmp/relu-sink.preset"
check "a preset with attention relu and sink 5: refused, naming the file" refused \
    "--sink 5: accepted only with softmax attention (the sink joins the softmax's denominator), not -a/--attention relu" -- --batch "${small[@]}" --preset "$tmp/relu-sink.preset"
jsonl_refused() {
    printf '{"attention": "markov", "sink": 5}\n' | "$BIN" --batch --jsonl "${small[@]}" >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -qF -- "line 1: --sink 5: accepted only with softmax attention (the sink joins the softmax's denominator), not -a/--attention markov" "$tmp/err" ||
        { echo "  stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "a --jsonl line with markov and a sink: refused" jsonl_refused
check "a --jsonl line with a sink of none and relu: accepted" bash -c \
    "printf '{\"attention\": \"relu\", \"sink\": null}\n' | '$BIN' --batch --jsonl ${small[*]} >/dev/null"
finish
