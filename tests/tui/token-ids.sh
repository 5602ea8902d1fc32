#!/bin/bash
# The screen on a checkpoint with its embedding table: the status line says where the input
# comes from (random ids from the seed in the table, or a --token-ids file); r draws new ids;
# with a file, the keys that would change T or leave the embedding input stay and say the ids
# fix them.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings="-T 16 -d 16 -L 2 --heads 2 --mlp gelu --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $settings --export-weights "$TMP/w" 2>/dev/null
# The export with a Llama model's tensors around the block, a 7-row model.embed_tokens among them.
/usr/bin/python3 tests/cli/safetensors_tool.py whole-model "$TMP/w/model.safetensors" "$TMP/whole.safetensors"
start 160 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --weights '$TMP/whole.safetensors' 2>/dev/null"
expect "the status line: random ids from the seed in the checkpoint's table" "input=random ids, seed 1 in model\.embed_tokens\.weight"
press "r: new ids, from seed 2" "input=random ids, seed 2 in model\.embed_tokens\.weight" r
press "T: T rises with the embedding input (T > d)" "T=32" T
quits "q quits"

printf '1\n6\n6\n0\n3\n2\n5\n4\n1\n0\n' >"$TMP/ids.txt"
start 160 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -d 16 -L 2 --heads 2 --mlp gelu --wo gaussian --weights '$TMP/whole.safetensors' --token-ids '$TMP/ids.txt' 2>/dev/null"
expect "the status line names the file and the table" "input=$TMP/ids\.txt in model\.embed_tokens\.weight"
expect "... and T is the file's 10 ids" "T=10"
press "T: T stays, the file's ids fix it" "T stays at 10: the token ids of $TMP/ids\.txt fix T = 10" T
press "=: the input stays the embedding, the ids need it" "stays at embedding: the token ids of $TMP/ids\.txt are the input" =
quits "q quits"
finish
