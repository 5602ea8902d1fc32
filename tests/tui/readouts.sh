#!/bin/bash
# Readouts that say what the numbers say: a value the batch document writes as null is
# "n/a" on the screen with the reason, never "nan" or "inf" (the width sweep's fitted slope
# at layer 8, where no gap-off point is resolved).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# The document first: at layer 8 the gap-off slope is null (fewer than two resolved points),
# the gap-removed one a number.  The screen is checked against this, not against itself.
"$BIN" --batch --layer 8 --sweep-T >"$TMP/sweep.json"
check "--batch --layer 8 --sweep-T: the gap-off slope is null, the gap-removed one a number" \
    "$PY" -c "
import json, sys
w = json.load(open(sys.argv[1]))['width_sweep']
sys.exit(0 if w['slope'] is None and isinstance(w['slope_gap'], float) else 1)" "$TMP/sweep.json"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --layer 8"
expect "the default network at layer 8 computes" "computed in [0-9]+ ms"
press "v: the width sweep arrives with its fitted slopes" "fitted slopes" v
expect "the null slope reads n/a and the other a number" \
    "fitted slopes n/a \(gap off\), [0-9.]+ \(removed\)"
expect "... with the reason the document's null has" "n/a: fewer"
check "no nan or inf anywhere on the screen" absent "\b(nan|inf)\b"
quits "q quits"

finish
