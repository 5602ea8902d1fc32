#!/bin/bash
# The matrix-free certificates of s_min(K) against the exact path (docs/model.md §8): on the
# cutting-skip preset, where kappa(K) grows with depth until the rounding of the products
# outweighs the Ritz residual, over seeds and sizes with T*d <= 4096 (K is built), the exact
# s_min lies within the stated jacobian_s_min_error of the Lanczos path's and the Kronecker
# path's at every layer of both networks they certify (plus the exact path's own n*eps*s_max).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

run() { batch_document "$tmp/$1" --conditioning --preset presets/skipless-cutting-skip.preset "${@:2}"; } # name, args...

within() { # exact's name, the estimate's name
    check "$2: the exact s_min within the certificate at every certified layer" \
        "$PY" - "$tmp/$1.json" "$tmp/$2.json" <<'PY'
import json, sys
exact, estimate = (json.load(open(p)) for p in sys.argv[1:3])
n = exact["config"]["T"] * exact["config"]["d"]
exact, estimate = exact["conditioning"], estimate["conditioning"]
assert exact["jacobian_exact"] is True and estimate["jacobian_exact"] is False
compared, bad = 0, []
for net in ("", "counterpart_"):
    rows = zip(exact[net + "jacobian_s_min"], exact[net + "jacobian_norm"],
               estimate[net + "jacobian_s_min"], estimate[net + "jacobian_s_min_error"])
    for l, (x, top, v, err) in enumerate(rows, 1):
        assert (v is None) == (err is None), (net, l, v, err)
        if v is None:
            continue
        compared += 1
        # The exact path's s_min is that of K + dK, |dK| ~ eps |K| (LU or SVD): 4 n eps s_max.
        if not abs(v - x) <= err + 4 * n * 2.0**-52 * top:
            bad.append(f"{net or 'network '}layer {l}: exact {x!r}, estimate {v!r}, "
                       f"|diff| {abs(v - x):.3g} > bound {err:.3g}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad or compared == 0 else 0)
PY
}

# The preset (T = 16, d = 64), a second seed, and other shapes of T*d = 1024 and 2048.
paths_against_exact run within "preset:" "seed2:--seed 2" "wide:-T 8 -d 128 --seed 3" \
    "square:-T 32 -d 32 -L 10 --seed 4"
finish
