#!/bin/bash
# Nothing a user reads points outside the repository: a clone has no ../shared, no spec and
# no papers beside it.  Checked: the README, docs/, the man page, the presets' headers (the
# picker shows them), every string literal of the program, and --help.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
outside='\.\./|shared/|\bSPEC\b|THEORY\.md|STYLE\.md|papers/'

no_outside_reference() { # files...
    ! grep -nE "$outside" "$@"
}
check "README.md names nothing outside the repository" no_outside_reference README.md
check "docs/ names nothing outside the repository" no_outside_reference docs/*.md
check "the man page names nothing outside the repository" no_outside_reference attnscope.1
check "preset headers name nothing outside the repository" no_outside_reference presets/*.preset presets/tour/*.preset
string_literals() { # every "..." of the program's sources, one a line, with file:line
    grep -noE '"([^"\\]|\\.)*"' src/*/*.c src/*/*.h
}
check "no string literal of the program names anything outside the repository" \
    bash -c "! { $(declare -f string_literals); string_literals | grep -E '$outside'; }"
help_self_contained() {
    "$BIN" --help >"$tmp/help" && [ -s "$tmp/help" ] && ! grep -nE "$outside" "$tmp/help"
}
check "--help names nothing outside the repository" help_self_contained
docs_exist() { # every docs/*.md the user-facing texts link to exists
    local missing=0 f
    for f in $(grep -ohE 'docs/[a-z_-]+\.md' README.md docs/*.md attnscope.1 presets/*.preset presets/tour/*.preset src/*/*.c | sort -u); do
        [ -f "$f" ] || { echo "  $f is named but missing"; missing=1; }
    done
    return $missing
}
check "every docs/ file that is named exists" docs_exist
check "every docs/model.md §N named exists, and one beside a topic (merge, conditioning, cost, initialisation) has it in its title; every .md file and repository path named (docs, presets, sources, tests, --help) is in the repository" \
    env BIN="$BIN" "$PY" tests/cli/doc_refs.py
finish
