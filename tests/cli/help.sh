#!/bin/bash
# --help is generated from the settings table; the README's copy of it and the man page
# must not drift from it: the README shows it verbatim, the man page names every option.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

"$BIN" --help >"$tmp/help" 2>"$tmp/err"
check "--help exits 0 with the usage on stdout, nothing on stderr" \
    test $? -eq 0 -a -s "$tmp/help" -a ! -s "$tmp/err"

readme_copy() {
    sed -n '/^## Options$/,/^## /p' README.md | sed -n '/^```$/,/^```$/p' | sed '1d;$d' >"$tmp/readme"
    diff -u "$tmp/readme" "$tmp/help" >"$tmp/diff" || { sed 's/^/  /' "$tmp/diff"; return 1; }
}
check "the README's Options section is --help verbatim" readme_copy

man_names_all() {
    local option missing=0
    for option in $(grep -oE -- '--[a-zA-Z][a-zA-Z-]*' "$tmp/help" | sort -u); do
        grep -qF -- "${option//-/\\-}" attnscope.1 || { echo "  attnscope.1 lacks $option"; missing=1; }
    done
    return $missing
}
check "the man page names every option of --help" man_names_all

# EXIT STATUS says that 2 writes nothing to stdout; a bad --jsonl line does write its record
# (exit 2): the section must say so, beside the behaviour it describes.
man_exit_status_jsonl() {
    echo garbage | "$BIN" --batch --jsonl -T 8 -d 8 -L 1 >"$tmp/bad.jsonl" 2>/dev/null
    local status=$?
    [ $status -eq 2 ] && grep -qF '"error"' "$tmp/bad.jsonl" ||
        { echo "  a bad line: exit $status, stdout: $(head -c 200 "$tmp/bad.jsonl")"; return 1; }
    sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' attnscope.1 >"$tmp/exit-status"
    grep -qF 'jsonl, a bad line' "$tmp/exit-status" && grep -qF 'is written to standard output' "$tmp/exit-status" ||
        { echo "  EXIT STATUS does not say that a bad --jsonl line writes its record"; return 1; }
}
check "the man page's EXIT STATUS says a bad --jsonl line's record is written (exit 2)" man_exit_status_jsonl

# The other way: every option the docs name in code (`--x`) exists, in --help or in one of the
# scripts the docs run (scripts/, bench/ and its Python; GNU parallel's, which
# sweep-parallel.sh passes on).
docs_name_real_options() {
    local option missing=0
    cat "$tmp/help" scripts/*.sh bench/*.sh bench/*.py >"$tmp/known"
    for option in $(grep -ohE '`[^`]*`' README.md docs/*.md | grep -oE -- '(^|[ `])--[a-z][a-z0-9-]*' |
        sed 's/^[ `]//' | sort -u); do
        grep -qE -- "$option([^a-z0-9-]|\$)" "$tmp/known" || { echo "  no such option: $option"; missing=1; }
    done
    return $missing
}
check "every option README.md and docs/ name exists" docs_name_real_options
# The commands the README and docs/ show in code blocks run the build's own binary,
# build/attnscope, as a newcomer copies them after `make` (the README says `make install` makes
# the short name work): no line of a code block starts with a bare `attnscope` command, but for
# the Options section's copy of --help, whose usage lines name the program.
code_runs_the_build() {
    "$PY" - README.md docs/*.md <<'PYEOF'
import re, sys
bare = []
for path in sys.argv[1:]:
    inside, options = False, False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("## "):
            options = line.strip() == "## Options"
        if line.startswith("```"):
            inside = not inside
        elif inside and not options and re.match(r"\s*(\$ )?attnscope( |$)", line):
            bare.append("%s:%d: %s" % (path, number, line.strip()))
print("\n".join("  " + b for b in bare))
sys.exit(1 if bare else 0)
PYEOF
}
check "README.md's and docs/' code blocks run build/attnscope" code_runs_the_build
finish
