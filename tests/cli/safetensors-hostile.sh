#!/bin/bash
# The hostile safetensors corpus: each rule of the reader (safetensors.h) broken once,
# truncations, huge lengths, deep and non-UTF-8 JSON, and a sharded index that lies.  Each
# file is refused with exit 2, nothing on stdout, and a message naming the file and what was
# expected; never a crash (run-all.sh runs this under ASan+UBSan too).  The files are
# written by tests/cli/safetensors_tool.py (struct and json, an independent writer).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused() { # file expected-message: the message names the file after the option, quoted, once
    ends_saying 2 "$2" "$1" -- "$BIN" --batch -T 4 -d 4 -L 2 --weights "$1" &&
        grep -q "^attnscope: --weights '" "$tmp/err" &&
        [ "$(grep -oF -e "$1: " -e "$1': " "$tmp/err" | wc -l)" -le 1 ] ||
        { echo "  $1: not named once after --weights: $(head -c 300 "$tmp/err")"; return 1; }
}

if ! "$PY" tests/cli/safetensors_tool.py hostile "$tmp/corpus"; then
    skip_script "the hostile corpus" "python3 cannot write it here"
fi
while IFS=$'\t' read -r name says; do
    check "$name: exit 2, says \"$says\"" refused "$tmp/corpus/$name.safetensors" "$says"
done <"$tmp/corpus/manifest"

# A sharded checkpoint whose index disagrees with its shards.
"$BIN" --batch -T 4 -d 4 -L 2 --export-weights "$tmp/good" >/dev/null 2>&1
"$PY" tests/cli/safetensors_tool.py shard "$tmp/good/model.safetensors" "$tmp/sharded"
index=$tmp/sharded/model.safetensors.index.json
lying_index() { # directory, python expression on the index `x`
    rm -rf "$1" && cp -r "$tmp/sharded" "$1"
    "$PY" -c "import json; p='$1/model.safetensors.index.json'; x=json.load(open(p)); $2; json.dump(x, open(p, 'w'))"
}
lying_index "$tmp/moved" "m = x['weight_map']; k = 'model.layers.0.self_attn.q_proj.weight'; m[k] = m[k].replace('00001-of', '0000X-of').replace('00002-of', '00001-of').replace('0000X-of', '00002-of')"
check "index naming the wrong shard" refused "$tmp/moved" "tensor 'model.layers.0.self_attn.q_proj.weight' is in $tmp/moved/model-0000"
check "... and says the index names another" grep -qF "but the index names another shard for it" "$tmp/err"
lying_index "$tmp/unnamed" "del x['weight_map']['model.layers.1.self_attn.v_proj.weight']"
check "index leaving a tensor out" refused "$tmp/unnamed" "but the index does not name it"
lying_index "$tmp/extra" "x['weight_map']['model.norm.weight'] = 'model-00001-of-00002.safetensors'"
check "index naming a tensor no shard holds" refused "$tmp/extra" "the index names tensor 'model.norm.weight'"
lying_index "$tmp/escape" "x['weight_map']['model.layers.0.self_attn.q_proj.weight'] = '../good/model.safetensors'"
check "index naming a file outside the directory" refused "$tmp/escape" "expected a file name in the directory"
lying_index "$tmp/missing" "x['weight_map']['model.layers.0.self_attn.q_proj.weight'] = 'gone.safetensors'"
check "index naming a missing shard" refused "$tmp/missing" "gone.safetensors': No such file or directory"
# An index of 300 000 names for one shard: looked up by sorted names, not one by one against
# each other (which took minutes).
lying_index "$tmp/wide" "m = x['weight_map']; s = m['model.layers.0.self_attn.q_proj.weight']; m.update(('t%d' % i, s) for i in range(300000))"
check "an index of 300 000 names no shard holds" refused "$tmp/wide" "the index names tensor 't"
printf '{"weight_map": [1]}' >"$index"
check "index without a weight map object" refused "$tmp/sharded" "expected an object with \"weight_map\""
mkdir "$tmp/empty"
check "a directory holding no checkpoint" refused "$tmp/empty" "a directory without model.safetensors.index.json or model.safetensors"
check "a path that does not exist" refused "$tmp/none" "cannot read it: No such file or directory"
finish
