#!/bin/bash
# Every preset of a real architecture loads on the screen by its name: the status line shows
# the preset's T, d, depth and heads; a -small variant finishes in the screen's worker, a full
# one starts computing (minutes here) and q still quits at once, cleanly.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

for architecture in gpt2-small llama3-8b mistral-7b qwen3-8b olmo2-7b gemma3-4b gpt-oss-20b; do
    small=$architecture-small
    for name in "$architecture" "$small"; do
        read -r T d L H < <(grep -E '^(tokens|width|depth|heads) =' "presets/$name.preset" |
            awk '{ v[$1] = $3 } END { print v["tokens"], v["width"], v["depth"], v["heads"] }')
        # --no-confirm: a full preset's minutes would otherwise be asked about first.
        start 160 44 "env LANG=$UTF8 LC_ALL=$UTF8 ATTNSCOPE_PRESETS='$(pwd)/presets' '$BIN' --preset $name --no-confirm"
        expect "$name loads by name: T=$T d=$d L=$L H=$H on the status line" "T=$T +d=$d +L=$L .* H=$H "
        if [ "$name" = "$small" ]; then
            expect "$name is computed on the screen" "computed in [0-9]+ ms"
        else
            expect "$name starts computing" "computing [0-9]+%"
        fi
        quits "$name: q quits with status 0"
    done
done
finish
