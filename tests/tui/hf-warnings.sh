#!/bin/bash
# --hf-config's "not modelled" warnings, printed on stderr just before the screen takes the
# terminal, are in the screen's list too (! and the status line's count), first, with every
# result they describe: T is attnscope's, not the file's, so a new T keeps them; a setting the
# file set (its hidden_size, d) changed by key takes the warning about its model away, changed
# back brings it back (tests/test_hf_config.c checks the rule warning by warning).  The file:
# Qwen3-0.6B's config.json, with one field added that no reader knows (its warning is about
# the file's model as a whole); L = 2 of its 28 layers, for time (-L after the file: its depth
# is the option's, and the L key would not count as leaving the file's model).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

config=$TMP/qwen3.json
/usr/bin/python3 - tests/data/hf-config/qwen3-0.6b.json "$config" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["attn_unheard_of_scale"] = 2.5
json.dump(c, open(sys.argv[2], "w"), indent=2)
EOF
"$BIN" --batch -T 16 --hf-config "$config" -L 2 2>"$TMP/stderr" >/dev/null
fields=$(sed -nE 's/^attnscope: warning: [^:]*: ([A-Za-z0-9_]+) = .*/\1/p' "$TMP/stderr")
check "stderr warns about the unknown field" grep -q "attn_unheard_of_scale = 2.5 is not modelled" "$TMP/stderr"

trace=$TMP/hf.trace
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 16 --hf-config '$config' -L 2 --no-confirm --trace '$trace' 2>/dev/null"
expect "the file's settings compute" "computed in [0-9]+ ms"
check "  and settle" settled
press "! opens the list" "warnings of the shown result \([0-9]+\)" "!"
listed() { # every field stderr warned about is in the list on the screen
    local field
    for field in $fields; do
        screen | grep -q "$field = " || { echo "    # $field is not listed" && return 1; }
    done
}
check "the list holds every field stderr warned about" listed
expect "  first, numbered 1" "1\. $config: "
listed_count() { screen | grep -oE 'warnings of the shown result \([0-9]+\)' | grep -oE '[0-9]+'; }
with=$(listed_count)
keys Escape
check "Esc closes it" wait_gone "warnings of the shown result"
check "the status line counts them" eval 'screen | grep -qE "! $with warnings  \? help"'

press "t: T = 8, which the file does not set" "T=8 " t
check "  computed" settled
press "! still lists the file's warnings, first" "1\\. $config: " "!"
check "  every field stderr warned about" listed
check "  as many as before" eval '[ "$(listed_count)" -eq "$with" ]'
keys Escape
check "Esc closes it" wait_gone "warnings of the shown result"

press "d: d = 512, the file's hidden_size changed" "d=512 " d
check "  computed" settled
press "! lists none of the file's warnings now" "warnings of the shown result \([0-9]+\)" "!"
check "  attn_unheard_of_scale is not listed" absent "attn_unheard_of_scale"
check "  the list is shorter by stderr's warnings" \
    eval '[ "$(listed_count)" -eq $((with - $(wc -l <"$TMP/stderr"))) ]'
keys Escape
check "Esc closes it" wait_gone "warnings of the shown result"

press "D: the file's d again" "d=1024 " D
check "  computed" settled
# The status line may show the file's first warning itself: the list's numbered entry is what
# only ! shows.
press "! lists the file's warnings again, first" "1\\. $config: " "!"
check "  every field stderr warned about" listed
keys Escape
quits "q quits"
finish
