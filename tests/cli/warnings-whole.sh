#!/bin/bash
# No warning is ever cut (issue 25's explorer found two cut at 239 characters): every
# Warnings_add template in src/, its numbers and names at their widest, fits WARNING_LENGTH
# with the room a copy's prefix takes, and the warnings of --batch documents that make the
# longest ones (the conditioning's Kronecker tally, the sinks' note of gpt-oss) match their
# templates whole, last words included (tests/cli/warnings_whole.py).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
whole=tests/cli/warnings_whole.py

check "every warning template fits WARNING_LENGTH at its widest" \
    $PY $whole bound src include/attnscope/model.h
check "the conditioning's warnings at -T 64 -d 64 -L 4 end as their templates do" \
    batch_document "$tmp/cond" -T 64 -d 64 -L 4 --conditioning
check "  ... matched whole" $PY $whole match src "$tmp/cond.json"
check "gpt-oss-20b-small's warnings (the sinks' note) end as their templates do" \
    batch_document "$tmp/oss" --preset gpt-oss-20b-small
check "  ... matched whole" $PY $whole match src "$tmp/oss.json"
# The checker itself must see a cut: the sinks' note without its last word fails.
$PY - "$tmp/oss.json" "$tmp/cut.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["warnings"] = [w[:-12] if w.startswith("sinks (") else w for w in doc["warnings"]]
json.dump(doc, open(sys.argv[2], "w"))
PY
check "a warning cut by 12 characters is caught" \
    bash -c "! $PY $whole match src '$tmp/cut.json' >/dev/null"
finish
