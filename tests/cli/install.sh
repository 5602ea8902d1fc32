#!/bin/bash
# Presets found wherever the program is: `make install DESTDIR=...` puts the binary and the
# presets in a tree that is neither the source tree nor the compiled-in PREFIX; run from
# another directory, that binary finds its presets beside it (share/attnscope/presets beside its bin/),
# `--preset NAME` reads the user's preset of that name before the shipped one, and a name
# that is neither is refused with the places looked at, exit 2.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
root=$(pwd)
build=$(dirname "$BIN")

# The tree is already built: install copies it (the default PREFIX, which the binary was
# built with, under DESTDIR).
installed() {
    make -s --no-print-directory -C "$root" install BUILD="$build" DESTDIR="$tmp/dest" \
        PREFIX=/usr/local >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; return 1; }
    [ -x "$tmp/dest/usr/local/bin/attnscope" ] &&
        [ -f "$tmp/dest/usr/local/share/attnscope/presets/fig1-markov.preset" ] &&
        [ -f "$tmp/dest/usr/local/share/attnscope/presets/tour/01-one-matrix-has-a-gap.preset" ]
}
check "make install DESTDIR=... installs the binary, the presets and the tour" installed
bin=$tmp/dest/usr/local/bin/attnscope
mkdir -p "$tmp/elsewhere" "$tmp/home"

# Runs the installed binary from a directory without presets, with an empty home.
run_elsewhere() { # out, arguments...
    local out=$1
    shift
    (cd "$tmp/elsewhere" && env -u ATTNSCOPE_PRESETS -u ATTNSCOPE_TOUR -u XDG_CONFIG_HOME \
        HOME="$tmp/home" "$bin" "$@") >"$out" 2>"$out.err"
}
config_is() { # document, python expression over c (its config)
    "$PY" -c 'import json, sys
c = json.load(open(sys.argv[1]))["config"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
by_name() {
    run_elsewhere "$tmp/markov.json" --batch --preset fig1-markov -T 16 -d 16 -L 1 &&
        config_is "$tmp/markov.json" 'c["attention"] == "markov"'
}
check "--preset fig1-markov (a name) finds the shipped preset, run outside the source tree" by_name
by_name_suffixed() {
    run_elsewhere "$tmp/tour.json" --batch --preset 04-iid-markov.preset -T 16 -d 16 -L 1 &&
        config_is "$tmp/tour.json" 'c["attention"] == "markov"'
}
check "--preset NAME.preset finds a tour step by its file name" by_name_suffixed
users_first() {
    mkdir -p "$tmp/home/.config/attnscope/presets"
    printf 'attention = relu\ntokens = 16\nwidth = 16\ndepth = 1\n' \
        >"$tmp/home/.config/attnscope/presets/fig1-markov.preset"
    run_elsewhere "$tmp/mine.json" --batch --preset fig1-markov &&
        config_is "$tmp/mine.json" 'c["attention"] == "relu" and c["T"] == 16'
}
check "the user's preset of that name comes before the shipped one" users_first
unknown_name() {
    run_elsewhere "$tmp/none.json" --batch --preset no-such-preset
    local status=$?
    [ "$status" -eq 2 ] && [ ! -s "$tmp/none.json" ] &&
        grep -q "^attnscope: --preset 'no-such-preset': no such file, nor a preset of that name in $tmp/home/.config/attnscope/presets or $tmp/dest/usr/local/share/attnscope/presets" "$tmp/none.json.err" ||
        { cat "$tmp/none.json.err"; return 1; }
}
check "an unknown name: exit 2, naming the name and the directories looked in" unknown_name
a_path_stays_a_path() {
    run_elsewhere "$tmp/path.json" --batch --preset ./fig1-markov
    [ $? -eq 2 ] && grep -q "^attnscope: --preset './fig1-markov': No such file or directory" "$tmp/path.json.err"
}
check "a path (with /) is read as given, never looked up by name" a_path_stays_a_path
finish
