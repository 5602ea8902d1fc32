#!/bin/bash
# --conditioning-path exact pins the path (README, "Conditioning"): above T*d = 4096, where K
# is not built, batch refuses it with exit 2 and that limit, nothing on stdout (main ran the
# matrix-free path there, exit 0, nothing said); at T*d = 4096 and below it runs with K built.
# And the refusal above --max-time says what is true of the size it names, by that size's
# path (K built there: not "about fifty products"), and says so when no size fits (main
# printed nothing then).  The rate is pinned (ATTNSCOPE_GFLOPS): no timing decides.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

check "exact at T*d = 16384: refused, the limit named" \
    refused "--conditioning-path exact: K is built only up to T*d = 4096, and T = 128, d = 128 gives T*d = 16384" \
    -- "$BIN" --batch --conditioning --conditioning-path exact -T 128 -d 128 -L 2
check "exact at T*d = 4608: refused, the limit named" \
    refused "--conditioning-path exact: K is built only up to T*d = 4096, and T = 64, d = 72 gives T*d = 4608" \
    -- "$BIN" --batch --conditioning --conditioning-path exact -T 64 -d 72 -L 1 --heads 1
batch_document "$tmp/edge" --conditioning --conditioning-path exact -T 8 -d 64 -L 1
check "T*d = 512: exact path, K built" "$PY" -c '
import json, sys
assert json.load(open(sys.argv[1]))["conditioning"]["jacobian_exact"] is True' "$tmp/edge.json"
big=(--batch --conditioning -T 512 -d 768 -L 12 --heads 12 --max-time 0.5)
check "no size fits: said" env ATTNSCOPE_GFLOPS=0.001 bash -c '. tests/cli/lib.sh; refused \
    "within 0.5 s the conditioning fits at no size from T = d = 8 up" -- "$0" "$@"' "$BIN" "${big[@]}"
named_exact() {
    ATTNSCOPE_GFLOPS=10 "$BIN" "${big[@]}" >/dev/null 2>"$tmp/named.err"
    [ $? -eq 2 ] && grep -qF "the conditioning fits at T = 8, d = 12 (depth, heads and the rest kept): there K is built in full (T*d = 96 products" "$tmp/named.err" &&
        ! grep -q "about fifty" "$tmp/named.err" || { head -c 600 "$tmp/named.err"; return 1; }
    # followed, it runs on the exact path
    ATTNSCOPE_GFLOPS=10 "$BIN" "${big[@]}" -T 8 -d 12 >"$tmp/named.json" 2>/dev/null &&
        "$PY" -c 'import json, sys; assert json.load(open(sys.argv[1]))["conditioning"]["jacobian_exact"]' "$tmp/named.json"
}
check "the size named runs on the exact path: worded so" named_exact
finish
