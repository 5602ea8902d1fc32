#!/bin/bash
# Rewrites the pinned documents of tests/cli/block-pin with what the build gives now, and
# proves the rewrite changes nothing pinned: every line of the old document (but the config
# line, which may gain keys, and is kept as stored) is in the new one, unchanged and in order; every line added is a
# new key's, named in NEW_KEYS; and a warnings line may change only by warnings appended
# after the old ones.  Refuses (and writes nothing) otherwise.
#
#   BIN=build/attnscope NEW_KEYS="attention_entropy max_attention_mean ..." scripts/block-pin-update.sh
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-build/attnscope}
PY=${PY:-python3}
: "${NEW_KEYS:?name the top-level keys the documents may gain}"
dir=tests/cli/block-pin
. tests/blas-kernel.sh
pin_blas_kernel || { echo "block-pin-update: $blas_kernel_missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while read -r name args; do
    case $name in '#'* | '') continue ;; esac
    # shellcheck disable=SC2086 # the options are words
    OPENBLAS_NUM_THREADS=1 "$BIN" --batch $args >"$tmp/$name.json"
    "$PY" - "$dir/$name.json" "$tmp/$name.json" "$NEW_KEYS" <<'PYEOF'
import json, sys
old_path, new_path, keys = sys.argv[1], sys.argv[2], sys.argv[3].split()
old, new = open(old_path).read().split("\n"), open(new_path).read().split("\n")
old_doc, new_doc = json.load(open(old_path)), json.load(open(new_path))
added = sorted(set(new_doc) - set(old_doc))
assert set(added) <= set(keys), f"{new_path}: unexpected keys {set(added) - set(keys)}"
assert set(old_doc) <= set(new_doc), f"{new_path}: keys removed"
for k in old_doc:
    if k not in ("config", "warnings"):
        assert json.dumps(old_doc[k]) == json.dumps(new_doc[k]), f"{new_path}: {k} changed"
assert all(new_doc["config"].get(k) == v for k, v in old_doc["config"].items()), "config changed"
assert new_doc["warnings"][:len(old_doc["warnings"])] == old_doc["warnings"], "warnings changed"
# Line by line: the old lines (but the config's and the warnings') in order, the rest new keys'.
i = 0
for line in new:
    if any(line.startswith(f' "{k}": ') for k in keys):
        continue
    assert i < len(old), f"{new_path}: line {line[:60]!r} added"
    same = line == old[i] or i == 1 or (old[i].startswith(' "warnings": ') and
                                          line.startswith(' "warnings": '))
    assert same, f"{new_path}: line {i + 1} {old[i][:60]!r} became {line[:60]!r}"
    i += 1
assert i == len(old), f"{new_path}: old line {old[i][:60]!r} missing"
# The stored config line stays as it is (block-pin.sh reads only its keys' values), so that
# a rewrite touches no line but those it adds.
new[1] = old[1]
open(new_path, "w").write("\n".join(new))
PYEOF
    echo "$name: old lines unchanged, added: $(
        "$PY" -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); print(" ".join(sorted(set(b)-set(a))) or "nothing", "| warnings +%d" % (len(b["warnings"])-len(a["warnings"])))' "$dir/$name.json" "$tmp/$name.json")"
done <"$dir/configs"
cp "$tmp"/*.json "$dir"/
