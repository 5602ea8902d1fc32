#!/usr/bin/env bash
# Dot2's kernel (src/core/dot2.c) must stay exact whatever the user's CFLAGS_EXTRA: GCC's
# default outside ISO modes, -ffp-contract=fast, fuses a*r into the TwoSum that follows and
# breaks TwoProduct, so the Makefile builds dot2.o with -ffp-contract=off.  Here dot2.o is
# built by the Makefile's own rule with CFLAGS_EXTRA="-std=gnu11 -march=native
# -ffp-contract=fast" (where the CPU has FMA; else the contraction cannot happen: a skip) and
# tests/cli/dot2_exact.c checks its sums against exact rounding errors.
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
CC=${CC:-cc}

if ! $CC -march=native -dM -E - </dev/null 2>/dev/null | grep -q '__FMA__'; then
    skip_script "Dot2 exact under -ffp-contract=fast" "-march=native has no FMA here"
fi
extra="-std=gnu11 -march=native -ffp-contract=fast"
if make -s --no-print-directory BUILD="$tmp" CFLAGS_EXTRA="$extra" "$tmp/core/dot2.o" \
    >"$tmp/make.log" 2>&1; then
    ok "make builds dot2.o with CFLAGS_EXTRA=\"$extra\""
else
    not_ok "make builds dot2.o with CFLAGS_EXTRA=\"$extra\": $(head -c 300 "$tmp/make.log")"
fi
if $CC -std=c11 -O2 -Isrc/core -o "$tmp/exact" tests/cli/dot2_exact.c "$tmp/core/dot2.o" -lm \
    2>"$tmp/cc.log"; then
    result=$("$tmp/exact")
    check "Dot2 exact with dot2.o built under $extra ($result)" test $? -eq 0
else
    not_ok "tests/cli/dot2_exact.c builds: $(head -c 300 "$tmp/cc.log")"
fi
finish
