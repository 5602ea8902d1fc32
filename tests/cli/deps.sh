#!/bin/bash
# Every program the tests run is declared: scripts/install-deps.sh's "check" list installs it,
# or a minimal Debian (debootstrap --variant=minbase: the packages of priority "required")
# has it already.  The commands are read off the test scripts: the first word of each
# command (after |, ;, &&, ||, $( and the wrappers check/run/timeout/env/exec), kept when it
# is a program on PATH and not one of the scripts' own functions; the Makefile's recipes too
# (make check runs them).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
if ! command -v dpkg-query >/dev/null 2>&1; then
    ok "# SKIP: not a Debian system: no package database to check the commands against"
    finish
    exit
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts=(Makefile tests/*.sh tests/cli/*.sh tests/tui/*.sh tests/fuzz/*.sh)

commands_of() { # scripts...: the command words, one a line
    "$PY" - "$@" <<'PY'
import re, sys
words, functions = set(), set()
# Words that run the command after them; an option, a number, an assignment or a quoted
# description before the command is passed over too.
wrappers = {"check", "run", "timeout", "env", "exec", "command", "nice", "xargs", "if",
            "elif", "while", "until", "!", "{", "(", "bash", "sh"}

def without_programs(text):
    """The text without its comments and its single-quoted spans over several lines
    (programs of another language: python, awk), read in quote order as the shell does."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c in "'\"":
            end = text.find(c, i + 1) if c == "'" else i + 1
            if end < 0:
                end = len(text)
            if c == '"':
                while end < len(text) and text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
            span = text[i:end + 1]
            out.append("''" if c == "'" and "\n" in span else span)
            i = end + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)

def scan(text):
    for line in text.splitlines():
        for segment in re.split(r"\|\||&&|[|;`]|\$\(|\(|\{|\bthen\b|\bdo\b|\belse\b", line):
            tokens = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|\S+', segment)
            while tokens:
                t = tokens.pop(0)
                if t[0] in "\"'":
                    if len(t) < 2 or t[-1] != t[0]:
                        break  # the segment goes on inside a string: text, not a command
                    continue  # a check's description
                if t in wrappers or re.match(r"^([A-Za-z_][A-Za-z0-9_]*=|-|[0-9.]+$)", t):
                    continue
                if re.match(r"^[a-z][a-z0-9_.+-]*$", t):
                    words.add(t)
                break
            # What a shell (-c) or a tmux pane (start COLS ROWS) runs is a script too.
            for script in re.findall(r'(?:-c|start \S+ \S+) ("(?:[^"\\]|\\.)*"|\'[^\']*\')', segment):
                scan(script[1:-1])

def without_heredocs(text):
    """The text without the bodies of its here-documents (python, JSON, presets)."""
    out, tag = [], None
    for line in text.splitlines():
        if tag is not None:
            tag = None if line.strip() == tag else tag
            continue
        out.append(line)
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        tag = m.group(1) if m else None
    return "\n".join(out)

for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    if path.endswith("Makefile"):
        # The recipes (tab-indented), without make's @ and $(Q) prefixes, but for `make
        # format`'s: a developer's tool, not a test.
        recipes, target = [], None
        for l in text.splitlines():
            if re.match(r"^[A-Za-z$(][^=]*:", l):
                target = l.split(":")[0]
            elif l.startswith("\t") and target != "format":
                recipes.append(re.sub(r"^\t(@|\$\(Q\)|-)*", "", l))
        text = "\n".join(recipes)
    text = without_heredocs(text)
    # A program named by its path in a variable (PY=/usr/bin/python3).
    words.update(re.findall(r"^[A-Za-z_]+=/(?:usr/)?bin/([a-z][a-z0-9_.+-]*)$", text, re.M))
    functions |= set(re.findall(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\(\)", text, re.M))
    scan(without_programs(text))
for w in sorted(words - functions):
    print(w)
PY
}

owner() { # program path: its Debian package (merged /usr: dpkg may know it under /bin)
    local p=$1 real
    real=$(readlink -f "$p")
    for candidate in "$p" "${p#/usr}" "$real" "${real#/usr}"; do
        pkg=$(dpkg-query -S "$candidate" 2>/dev/null | grep -v '^diversion ' | head -n 1 | cut -d: -f1)
        [ -n "$pkg" ] && { echo "$pkg"; return 0; }
    done
    return 1
}

declared=$(scripts/install-deps.sh list check) || declared=""
check "install-deps.sh lists the packages of mode check" test -n "$declared"

commands_of "${scripts[@]}" >"$tmp/words"
check "the commands of the Makefile and the test scripts are found (${#scripts[@]} files)" test -s "$tmp/words"
undeclared() {
    local w path pkg priority missing=0
    while read -r w; do
        path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$w") || continue
        pkg=$(owner "$path") || continue # not a packaged program: the build's own
        priority=$(dpkg-query -W -f='${Priority}' "$pkg" 2>/dev/null)
        [ "$priority" = required ] && continue
        # A versioned package (python3.11-minimal) is declared under its plain name.
        if ! grep -qxE "$pkg|${pkg%%[0-9.]*-*}|$(echo "$pkg" | sed -E 's/[0-9.]+(-minimal)?$//')[0-9.]*" \
            <<<"$declared"; then
            echo "  $w ($path) is in package $pkg ($priority), which install-deps.sh check does not install"
            missing=1
        fi
    done <"$tmp/words"
    return $missing
}
check "every command the tests run is declared or in a minbase Debian" undeclared
finish
