#!/bin/bash
# The README's samples of output.  Its --conditioning example (README, "Is it well conditioned?"): its command, run as
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

# The README's Batch mode sample alike (main's showed 63.99999999999997 where the binary
# printed 63.999999999999716): the command run as written, every line the same but for a
# measured number's last digits, which follow the BLAS kernels (the README says so): numbers
# equal to 1e-12 relative, ~T·ε·100 at T = 64, far below any change of the model.
batch_sample() {
    "$PY" - README.md "$BIN" <<'PY'
import re, subprocess, sys
lines = open(sys.argv[1]).read().split("\n")
start = [i for i, l in enumerate(lines) if l.startswith("$ build/attnscope --batch -T 64 -d 64 -L 3 |")]
assert len(start) == 1, "the README's Batch mode sample is not found once: %d" % len(start)
end = next(i for i in range(start[0], len(lines)) if lines[i] == "```")
command = lines[start[0]][2:].replace("build/attnscope", sys.argv[2], 1)
got = subprocess.run(command, shell=True, capture_output=True, text=True, check=True).stdout.split("\n")[:-1]
shown = lines[start[0] + 1:end]
number = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?")
assert len(got) == len(shown), (len(got), len(shown))
for a, b in zip(shown, got):
    assert number.sub("#", a) == number.sub("#", b), (a, b)
    for x, y in zip(number.findall(a), number.findall(b)):
        assert abs(float(x) - float(y)) <= 1e-12 * max(abs(float(x)), abs(float(y))), (x, y, a)
PY
}
check "README: the Batch mode sample is the binary's output (numbers to 1e-12)" batch_sample
# The README's row for the conditioning object names every key the object has: a series of
# the list "for the network and (prefix counterpart_) its counterpart" has its twin, a key
# named after "Once for both networks" has none (main's README listed jacobian_singular
# among the twins, which it has not, and left exact_max out).
conditioning_keys_documented() {
    "$BIN" --batch -T 8 -d 8 -L 2 --conditioning >"$tmp/cond.json" 2>"$tmp/cond.err" || return 1
    "$PY" - README.md "$tmp/cond.json" <<'PY'
import json, re, sys
row = next(l for l in open(sys.argv[1]) if l.startswith("| `conditioning` (with `--conditioning`) |"))
twins_text, once_text = row.split("Once for both networks", 1)
named = lambda text: set(re.findall(r"`([a-z_]+)`", text))
k = json.load(open(sys.argv[2]))["conditioning"]
keys = set(k)
twins = named(twins_text.split("its counterpart:", 1)[1])
once = {n for n in named(once_text) if n in keys or "counterpart_" + n in keys}
for n in twins:
    assert n in keys and "counterpart_" + n in keys, ("listed with a twin", n)
for n in once:
    assert n in keys and "counterpart_" + n not in keys, ("listed once", n)
undocumented = {n for n in keys if n.removeprefix("counterpart_") not in twins | once}
assert not undocumented, ("not in the README's row", sorted(undocumented))
PY
}
check "README: the conditioning row names every key of the object, twins and once-only keys as they are" \
    conditioning_keys_documented
finish
