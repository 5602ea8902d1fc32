#!/bin/bash
# The compact conditioning panel's title (80×24, the compare view's 40-column panels) names the
# route(s) s_min(K) took: on the Kronecker path (pinned) the cutting-skip preset certifies its
# first layers there and sends the rest to Lanczos, and the title said "κ(K) Lanczos" (a
# hard-coded word) where it now says "Kron+Lanczos".  Titles stay one row (40 columns).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 80 24 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' --preset skipless-cutting-skip --conditioning-path kron --no-confirm"
expect "the preset is loaded" "L=12"
press "V, the conditioning view" "κ\(K\)" V
press "c, the compare view: cutting-skip's title names both routes" "cutting-skip: κ\(K\) Kron\+Lanczos" c
expect "its result" "computed in [0-9]+ ms"
check "no panel title claims Lanczos alone where the Kronecker path certified" absent "cutting-skip: κ\(K\) Lanczos"
quits "q quits"
finish
