#!/bin/bash
# Today's layer, pinned: with every block setting at its default (one head, identity W^O,
# post-LN, unit skip and branch gains, no MLP, normal init), the --batch document of each
# configuration in tests/cli/block-pin/configs is bit for bit the stored one.  Only the
# "config" line may gain keys (new settings at their defaults); the keys stored there keep
# their values.  BLAS runs on one thread: a threaded dgemm may sum in another order.  And on
# one kernel: OpenBLAS picks its kernels by processor (an AVX-512 machine gets Cooperlake's or
# SkylakeX's), and another kernel sums in another order, which moves the last bit.  The
# documents were pinned with the Haswell kernel (AVX2 and FMA), which every x86-64 processor
# since 2013 runs; a kernel the environment already chose is kept.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=tests/cli/block-pin
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    if ! grep -qw avx2 /proc/cpuinfo 2>/dev/null || ! grep -qw fma /proc/cpuinfo 2>/dev/null; then
        while read -r name args; do
            case $name in '#'* | '') continue ;; esac
            skip "$name: bit-identical to the pinned document" "no AVX2/FMA for the pinning kernel"
        done <"$dir/configs"
        finish
        exit
    fi
    export OPENBLAS_CORETYPE=Haswell
fi

same_as_pinned() { # name args...
    local name=$1
    shift
    OPENBLAS_NUM_THREADS=1 "$BIN" --batch "$@" >"$tmp/$name.json" 2>"$tmp/err" || {
        echo "  exit status $?: $(head -c 300 "$tmp/err")"
        return 1
    }
    # Every line but the config line, byte for byte.
    if ! cmp -s <(sed 2d "$dir/$name.json") <(sed 2d "$tmp/$name.json"); then
        diff <(sed 2d "$dir/$name.json") <(sed 2d "$tmp/$name.json") | head -n 6
        return 1
    fi
    "$PY" - "$dir/$name.json" "$tmp/$name.json" <<'PYEOF'
import json, sys
pinned, now = (json.load(open(p))["config"] for p in sys.argv[1:3])
changed = {k: (v, now.get(k, "missing")) for k, v in pinned.items() if now.get(k, "missing") != v}
if changed:
    print("  config changed:", changed)
    sys.exit(1)
PYEOF
}

while read -r name args; do
    case $name in '#'* | '') continue ;; esac
    # shellcheck disable=SC2086 # the options are words
    check "$name ($args): bit-identical to the pinned document" same_as_pinned "$name" $args
done <"$dir/configs"
finish
