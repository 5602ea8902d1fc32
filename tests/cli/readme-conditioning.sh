#!/bin/bash
# The README's --conditioning example (README, "Is it well conditioned?"): its command, run as
# written (build/attnscope read as $BIN), prints exactly the output the README shows, so that
# the example cannot go stale when a warning's text or a number changes.  Its CPU time is a
# measurement (bench/README.md), not checked here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

# The code block whose first line starts with `$ build/attnscope --batch --conditioning
# --preset llama3-8b-small -L 4 |`: the command runs to the line that closes its python3 -c
# quote (`sep="\n")'`), the rest of the block is its output.
"$PY" - README.md "$tmp" <<'PY' || exit 1
import sys
lines = open(sys.argv[1]).read().split("\n")
start = [i for i, l in enumerate(lines)
         if l.startswith("$ build/attnscope --batch --conditioning --preset llama3-8b-small -L 4 |")]
assert len(start) == 1, "the README's example is not found once: %d" % len(start)
end = next(i for i in range(start[0], len(lines)) if lines[i] == "```")
block = lines[start[0]:end]
close = next(i for i, l in enumerate(block) if l.endswith("sep=\"\\n\")'"))
open(sys.argv[2] + "/command", "w").write("\n".join(block[:close + 1])[2:] + "\n")
open(sys.argv[2] + "/expected", "w").write("\n".join(block[close + 1:]) + "\n")
PY
sed -i "1s|^build/attnscope |\"\$BIN\" |" "$tmp/command"

runs_as_shown() {
    BIN=$BIN bash "$tmp/command" >"$tmp/got" 2>"$tmp/err" || return 1
    diff -u "$tmp/expected" "$tmp/got"
}
check "README: the --conditioning example of llama3-8b-small prints what the README shows" \
    runs_as_shown
finish
