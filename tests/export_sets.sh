# shellcheck shell=bash
# The files of an export, for the scripts that check which an export wrote (tests/cli and
# tests/tui export-views.sh): every export's, and a check that a directory holds exactly a set.
EVERY_EXPORT=(eigenvalues.csv singular_values.csv layers.csv eigenvalues.svg singular_values.svg
    stable_rank.svg attention_map.svg entropy.svg)
files_are() { # dir expected-names...: the names in dir, no more, no fewer
    local dir=$1
    shift
    diff <(ls "$dir") <(printf '%s\n' "$@" | sort) >/dev/null || {
        echo "  $dir holds: $(ls "$dir" | tr '\n' ' ')"
        return 1
    }
}
