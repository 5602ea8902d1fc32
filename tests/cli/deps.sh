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
    skip_script "every command the tests run is declared" \
        "not a Debian system: no package database to check the commands against"
fi
scripts=(Makefile tests/*.sh tests/cli/*.sh tests/tui/*.sh tests/fuzz/*.sh)

commands_of() { # scripts...: the command words, one a line
    "$PY" - "$@" <<'PY'
import re, sys
# Only words in a command's place count: the text of a description, a Python program given
# to "$PY" -c, a case pattern, the arguments of our own binary ("$BIN" merge) are not
# commands, and judging them would make the check depend on what else is installed (a
# machine with mailcap has a program called `open`).  So the text is read as the shell reads
# it: quotes first, then the operators outside them.
words, functions = set(), set()
# Words that run the command after them; an option, a number or an assignment before the
# command is passed over too.
wrappers = {"timeout", "env", "exec", "command", "nice", "xargs", "if", "elif", "while",
            "until", "!", "then", "do", "else", "time"}
# Words that begin a compound whose next words are not a command.
compounds = {"for", "case", "select", "esac", "function", "in", "done", "fi", "}", "local",
             "declare", "export", "readonly", "return", "exit", "shift", "unset"}
# Our test functions that take a (quoted) description before the command they run.
described = {"check", "run"}
shells = {"bash", "sh"}

def without_comments(text):
    """The text without its comments and its single-quoted spans over several lines
    (programs of another language: python, awk), read in quote order as the shell does."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c in "'\"":
            end = quote_end(text, i)
            span = text[i:end]
            out.append("''" if c == "'" and "\n" in span else span)
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)

def quote_end(text, i):
    """The index after the quoted span that starts at text[i]."""
    q, j = text[i], i + 1
    while j < len(text) and text[j] != q:
        if q == '"' and text[j] == "\\":
            j += 1
        elif q == '"' and text.startswith("$(", j):
            j = paren_end(text, j + 1) - 1
        j += 1
    return min(j + 1, len(text))

def paren_end(text, i):
    """The index after the parenthesis that opens at text[i], quotes respected."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c in "'\"":
            j = quote_end(text, j)
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        j += 1
        if depth == 0:
            return j
    return j

def segments(text):
    """The simple commands of text as lists of (word, quoted) tokens; the commands
    substituted inside ($(...), `...`), also inside double quotes, come out as their own."""
    tokens, word, quoted, i = [], [], False, 0
    def end_word():
        nonlocal word, quoted
        if word:
            tokens.append(("".join(word), quoted))
        word, quoted = [], False
    def end_segment():
        nonlocal tokens
        end_word()
        if tokens:
            yield_list.append(tokens)
        tokens = []
    yield_list, depth = [], 0
    case_pattern = re.compile(r"[ \t]*\(?[^\s()'\"|;&$]+(\|[^\s()'\"|;&$]+)*\)")
    if case_pattern.match(text):
        i = case_pattern.match(text).end()
    while i < len(text):
        c = text[i]
        if c == "\\":
            word.append(text[i + 1:i + 2] if text[i + 1:i + 2] != "\n" else "")
            i += 2
        elif c in "'\"":
            end = quote_end(text, i)
            body = text[i + 1:end - 1]
            if c == '"':
                for m in re.finditer(r"\$\(", body):
                    if not body.startswith("$((", m.start()):
                        inner = body[m.end():paren_end(body, m.start() + 1) - 1]
                        yield_list.extend(segments(inner))
            if not word:
                quoted = True
            word.append(body)
            i = end
        elif text.startswith("$((", i):
            word.append(text[i:paren_end(text, i + 1)])
            i = paren_end(text, i + 1)
        elif text.startswith("$(", i):
            end = paren_end(text, i + 1)
            yield_list.extend(segments(text[i + 2:end - 1]))
            word.append("$")
            i = end
        elif c == "`":
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end
            yield_list.extend(segments(text[i + 1:end]))
            word.append("$")
            i = end + 1
        elif text.startswith("((", i) or (c == "(" and text[i - 1:i] == "="):
            # Arithmetic, or an array's words: no command in either.
            end = paren_end(text, i)
            word.append(text[i:end])
            i = end
        elif c == "(":
            depth += 1
            end_segment()
            i += 1
        elif c == ")":
            depth -= depth > 0
            end_segment()
            i += 1
        elif c == "\n" and case_pattern.match(text, i + 1):
            # A case pattern (gauss|gaussian) ...): its words are no command.
            end_segment()
            i = case_pattern.match(text, i + 1).end()
        elif c in "|&;\n":
            end_segment()
            i += 1
        elif c in " \t":
            end_word()
            i += 1
        else:
            word.append(c)
            i += 1
    end_segment()
    return yield_list

def scan(text):
    for tokens in segments(text):
        described_left = 0
        while tokens:
            w, quoted = tokens.pop(0)
            if described_left:
                described_left -= 1
                continue
            if quoted:
                break  # "$PY", "$BIN": a program the scripts name by a variable
            if w in compounds:
                break
            if w in described and tokens and tokens[0][1]:
                described_left = 1
                continue
            if w in wrappers or re.match(r"^([A-Za-z_][A-Za-z0-9_]*=|-|[0-9.]+$)", w):
                continue
            if re.match(r"^[a-z][a-z0-9_.+-]*$", w):
                words.add(w)
                # What a shell runs with -c is a script too.
                if w in shells and len(tokens) >= 2 and tokens[0][0] == "-c":
                    scan(tokens[1][0])
            elif w == "start" or w.startswith("$"):
                pass
            break
        else:
            continue

def pane_commands(text):
    """What a tmux pane runs (start COLS ROWS "command"): a script too."""
    for tokens in segments(text):
        if len(tokens) >= 4 and tokens[0] == ("start", False):
            scan(tokens[3][0])

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

def make_recipes(text):
    """The Makefile's recipes (tab-indented) as shell, without make's @ and $(Q) prefixes
    and its $(VARIABLE) references, but for `make format`'s: a developer's tool, not a test."""
    recipes, target = [], None
    for l in text.splitlines():
        if re.match(r"^[A-Za-z$(][^=]*:", l):
            target = l.split(":")[0]
        elif l.startswith("\t") and target != "format":
            recipes.append(re.sub(r"^\t(@|\$\(Q\)|-)*", "", l))
    shell = "\n".join(recipes).replace("$$", "\0")
    while True:
        plain = re.sub(r"\$[({][^(){}]*[)}]", "MAKEVAR", shell)
        if plain == shell:
            break
        shell = plain
    return shell.replace("\0", "$")

for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    if path.endswith("Makefile"):
        text = make_recipes(text)
    text = without_heredocs(text)
    # A program named by its path in a variable (PY=/usr/bin/python3).
    words.update(re.findall(r"^[A-Za-z_]+=/(?:usr/)?bin/([a-z][a-z0-9_.+-]*)$", text, re.M))
    functions |= set(re.findall(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\(\)", text, re.M))
    text = without_comments(text)
    scan(text)
    pane_commands(text)
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

# The reading itself, on a script whose only commands are echo, sh, sort, true and uniq: a
# description, a case pattern, a Python program, an array and our own binary's arguments
# name programs (open, merge, grid, gzip, tac) that must not be judged.
cat >"$tmp/reading.sh" <<'SCRIPT'
check "the heads (a; open them) | tac" true
"$PY" -c "import json; json.load(open('x'))"
"$BIN" merge a b | "$BIN" grid 'T=8 gap=off'
case $x in
    open|tac) echo "$(sort f)" ;;
esac
small=(-T 8 -m gzip)
timeout 5 sh -c 'uniq x'
SCRIPT
check "only the words in a command's place are read as commands" \
    test "$(commands_of "$tmp/reading.sh" | tr '\n' ' ')" = "echo sh sort true uniq "

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
