#!/bin/bash
# The full-size conditioning panel's path line names what happened: at the default settings
# every layer of both networks goes beyond Lanczos's reach (batch's routes, an independent
# account, say "beyond" at every layer), and the line said "estimated: Lanczos" where Lanczos
# ran at no layer.  It now says bounds only.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

routes=$(timeout 600 "$BIN" --batch --conditioning 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["conditioning"]
print(" ".join(str(r) for r in c["jacobian_s_min_route"] + c["counterpart_jacobian_s_min_route"]))')
all_beyond() { [ -n "$routes" ] && [ -z "$(tr ' ' '\n' <<<"$routes" | grep -vx beyond)" ] || { echo "    # routes: $routes"; return 1; }; }
check "batch: every layer of both networks went beyond Lanczos's reach" all_beyond

trace=$TMP/path.trace
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --trace '$trace'"
expect "the default screen" "^T=256 +d=256"
keys V
if final_screen "$TMP/v.txt" "κ\(K\)"; then
    ok "V: the conditioning view computed"
else
    not_ok "V: the conditioning view computed" "$TMP/v.txt.why"
fi
check "  the path line says bounds only, every layer beyond Lanczos's reach" \
    grep -q "κ(K) bounds only: every layer beyond Lanczos's reach" "$TMP/v.txt"
check "  and claims no Lanczos estimate" eval "! grep -q 'estimated: Lanczos' '$TMP/v.txt'"
quits "q quits"
finish
