#!/bin/bash
# Today's layer, pinned: with every block setting at its default (one head, identity W^O,
# post-LN, unit skip and branch gains, no MLP, normal init), the --batch document of each
# configuration in tests/cli/block-pin/configs is bit for bit the stored one.  Only the
# "config" line may gain keys (new settings at their defaults); the keys stored there keep
# their values.  BLAS runs on one thread: a threaded dgemm may sum in another order; and on
# one kernel (tests/blas-kernel.sh).  Each document twice: one lane (OPENBLAS_NUM_THREADS=1
# turns batch's lanes off), and batch's default of two lanes, with the shown layer's
# eigenvalues on the second thread beside the deeper layers, which must change no bit.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
dir=tests/cli/block-pin
. tests/blas-kernel.sh
if ! pin_blas_kernel; then
    while read -r name args; do
        case $name in '#'* | '') continue ;; esac
        skip "$name: bit-identical to the pinned document (one lane, two)" "$blas_kernel_missing"
    done <"$dir/configs"
    finish
    exit
fi

same_as_pinned() { # name lanes args...
    local name=$1 lanes=$2
    shift 2
    local threads=(env OPENBLAS_NUM_THREADS=1)
    [ "$lanes" = 2 ] && threads=(env -u OPENBLAS_NUM_THREADS)
    "${threads[@]}" "$BIN" --batch "$@" >"$tmp/$name.json" 2>"$tmp/err" || {
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
    for lanes in 1 2; do
        # shellcheck disable=SC2086 # the options are words
        check "$name ($args, $lanes lanes): bit-identical to the pinned document" \
            same_as_pinned "$name" "$lanes" $args
    done
done <"$dir/configs"
finish
