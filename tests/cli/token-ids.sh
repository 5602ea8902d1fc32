#!/bin/bash
# --token-ids FILE with the drawn embedding table (no checkpoint; tests/cli/hf-forward.sh has
# a checkpoint's): the file's ids are the input (T their count, one id repeated T times gives
# X0 of rank 1), each way of writing a wrong file is refused naming its line or index and the
# value, exit 2, nothing on stdout; the options that would change T are refused beside it.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
base="--batch -d 32 -L 2 --heads 2"

stable_rank_0() { # document: sr(Σ_0)
    "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["stable_rank"][0])' "$1"
}
printf '5\n5\n5\n5\n5\n5\n' >"$tmp/same.txt"
printf '[1, 2, 3, 4, 5, 6]' >"$tmp/distinct.json"
the_file_is_the_input() {
    # shellcheck disable=SC2086
    "$BIN" $base --token-ids "$tmp/same.txt" >"$tmp/same.json" &&
        "$BIN" $base --token-ids "$tmp/distinct.json" >"$tmp/distinct.json.out" &&
        grep -qF '"T":6' "$tmp/same.json" &&
        grep -qF "\"input_source\":\"$tmp/same.txt in a drawn table\"" "$tmp/same.json" &&
        [ "$(stable_rank_0 "$tmp/same.json")" = 1 ] &&
        "$PY" -c 'import sys; sys.exit(not float(sys.argv[1]) > 1.5)' "$(stable_rank_0 "$tmp/distinct.json.out")"
}
check "one id six times: X0 of rank 1 (sr = 1); six ids: sr > 1.5; T = 6" the_file_is_the_input
printf '\n 7 \r\n\n3\n' >"$tmp/spaced.txt"
# shellcheck disable=SC2086
check "blank lines, blanks and CRLF around the ids: accepted, T = 2" \
    bash -c '"$0" $1 --token-ids "$2" | grep -qF "\"T\":2,"' "$BIN" "$base" "$tmp/spaced.txt"

refused() { refused_running "$BIN" -- "$@"; } # message -- args...
bad() { # description, file contents, message
    printf '%b' "$2" >"$tmp/bad"
    # shellcheck disable=SC2086
    check "$1" refused "$3" -- $base --token-ids "$tmp/bad"
}
bad "a negative id: its line and value" '1\n-2\n' "$tmp/bad:2: -2 is negative"
bad "a fractional id" '1\n2.5\n' "$tmp/bad:2: '2.5' is not a token id"
bad "a signed id" '+3\n4\n' "$tmp/bad:1: '+3' is not a token id"
bad "words" '1\nhello world\n' "$tmp/bad:2: 'hello world' is not a token id"
bad "an id too large for 32 bits" '1\n99999999999\n' "$tmp/bad:2: 99999999999 is too large"
bad "an exponent in the array: its index" '[1, 2e3]' "$tmp/bad: [1]: '2e3' is not a token id"
bad "a string in the array" '[1, "2"]' "$tmp/bad: [1] is a string, expected a token id"
bad "an array in the array (depth 1 only)" '[[1], 2]' "$tmp/bad: JSON"
bad "an object" '{"ids": [1, 2]}' "is not a token id"
bad "a malformed array" '[1, 2,]' "$tmp/bad: JSON"
bad "an empty file" '' "$tmp/bad: 0 token ids, expected at least 2"
bad "one id" '7\n' "$tmp/bad: 1 token id, expected at least 2"
bad "an id past --vocab's rows" '1\n50257\n' "$tmp/bad:2: token id 50257 is not below V = 50257"
"$PY" -c 'print("\n".join(["5"] * 4097))' >"$tmp/many.txt"
# shellcheck disable=SC2086
check "4097 ids: more than T's 4096" refused "$tmp/many.txt:4097: more than 4096 ids" -- \
    $base --token-ids "$tmp/many.txt"
"$PY" -c 'print("\n".join(["5"] * 4096))' >"$tmp/4096.txt"
# shellcheck disable=SC2086
check "the memory budget is checked for the file's T = 4096" refused \
    "T = 4096, d = 32, depth 2 needs about" -- $base --token-ids "$tmp/4096.txt" --max-memory 16M
# The file's bound, 1 MiB: two ids and blank lines up to it are read, one byte more is refused.
"$PY" -c 'import sys; sys.stdout.write("1\n2\n" + "\n" * (2**20 - 4))' >"$tmp/mib.txt"
# shellcheck disable=SC2086
check "a file of exactly 1 MiB: read (T = 2)" \
    bash -c '"$0" $1 --token-ids "$2" | grep -qF "\"T\":2,"' "$BIN" "$base" "$tmp/mib.txt"
printf '\n' >>"$tmp/mib.txt"
# shellcheck disable=SC2086
check "a file of 1 MiB and one byte: refused, naming the bound" refused \
    "'$tmp/mib.txt': larger than 1048576 bytes, more than 4096 token ids can take" -- \
    $base --token-ids "$tmp/mib.txt"
# shellcheck disable=SC2086
check "a directory: refused, naming what it is" refused "'$tmp': " -- $base --token-ids "$tmp"
# shellcheck disable=SC2086
check "a missing file" refused "'$tmp/none': No such file or directory" -- $base --token-ids "$tmp/none"
# shellcheck disable=SC2086
check "a read that fails: its reason (/proc/self/mem at address 0)" refused \
    "'/proc/self/mem': Input/output error" -- $base --token-ids /proc/self/mem
# shellcheck disable=SC2086
check "-T that disagrees with the count: refused, naming both" refused \
    "--token-ids '$tmp/same.txt' holds 6 ids, but -T/--tokens says 5" -- $base -T 5 --token-ids "$tmp/same.txt"
# shellcheck disable=SC2086
check "with --input orthonormal" refused "accepted only with the embedding input" -- \
    $base --input orthonormal --token-ids "$tmp/same.txt"
# shellcheck disable=SC2086
check "with --sweep-T" refused "--token-ids '$tmp/same.txt': accepted only without --sweep-T" -- \
    $base --sweep-T --token-ids "$tmp/same.txt"
check "with --jsonl" refused "accepted only without --jsonl" -- --batch --jsonl --token-ids "$tmp/same.txt"
# shellcheck disable=SC2086
"$BIN" $base --token-ids "$tmp/same.txt" | tr -d '\n' >"$tmp/record.jsonl" && echo >>"$tmp/record.jsonl"
check "merge refuses a record of a token-id file's input" refused \
    "config: input_source $tmp/same.txt in a drawn table: a record whose input is a token-id file" -- \
    merge "$tmp/record.jsonl"
check "with grid" refused "grid: --token-ids is not accepted" -- grid 'T=8,16' --token-ids "$tmp/same.txt"
finish
