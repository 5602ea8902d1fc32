#!/bin/bash
# Explores: runs each fuzz harness for SECONDS on a corpus seeded from the committed one
# (tests/fuzz/corpus/<name>/), presets/ and a few command lines; saves any crashing input under
# tests/fuzz/regressions/<name>/ for a regression test.  `make check` runs only the committed
# inputs; with FUZZ_KEEP=1 the new inputs that add coverage are merged into the committed corpus.
#   run.sh FUZZ_DIR SECONDS [HARNESS...]     (harnesses: options preset json safetensors
#                                             token_ids hf_config; default all)
set -u
cd "$(dirname "$0")/../.."
dir=$1
seconds=$2
shift 2
[ $# -gt 0 ] || set -- options preset json safetensors token_ids hf_config
status=0
for name in "$@"; do
    corpus="$dir/corpus-$name"
    mkdir -p "$corpus"
    cp tests/fuzz/corpus/"$name"/* "$corpus/" 2>/dev/null
    if [ "$name" = json ]; then
        printf '{"T":64,"d":64,"gap":"center","seeds":4,"sigma_qk":1.5e-1}\n' >"$corpus/seed1"
        printf '["\\ud83d\\ude00\\n", -0.5E+3, true, false, null, {}]' >"$corpus/seed2"
    elif [ "$name" = safetensors ]; then
        # A valid two-tensor file: the length, the header, F32 [1.5, -2] and BF16 [1].
        printf '\x6c\0\0\0\0\0\0\0{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[],"data_offsets":[8,10]}}\0\0\xc0\x3f\0\0\0\xc0\x80\x3f' >"$corpus/seed1"
    elif [ "$name" = token_ids ]; then
        printf '15496\n11\n  995\r\n\n0\n' >"$corpus/seed1"
        printf ' [50256, 0, 7]\n' >"$corpus/seed2"
    elif [ "$name" = hf_config ]; then
        cp tests/data/hf-config/*.json "$corpus/" 2>/dev/null
    elif [ "$name" = preset ]; then
        find presets -name '*.preset' -exec cp {} "$corpus/" \; 2>/dev/null
        printf 'tokens = 64\nwidth = 64\n# c\n' >"$corpus/seed1"
    else
        printf -- '-T\0000064\000-d\000128\000--gap\000center' >"$corpus/seed1"
        printf -- '--batch\000-a\000markov\000--seeds\0003\000-s\0001e-3' >"$corpus/seed2"
    fi
    echo "fuzz_$name: ${seconds}s"
    if ! "$dir/fuzz_$name" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
        -artifact_prefix="tests/fuzz/regressions/$name/" "$corpus" 2>"$dir/fuzz_$name.log"; then
        echo "fuzz_$name found a failure: see $dir/fuzz_$name.log and tests/fuzz/regressions/$name/"
        status=1
    fi
    grep -E '^Done|stat::number_of_executed_units' "$dir/fuzz_$name.log" | tail -1
    if [ "${FUZZ_KEEP:-0}" = 1 ]; then
        "$dir/fuzz_$name" -merge=1 tests/fuzz/corpus/"$name" "$corpus" 2>>"$dir/fuzz_$name.log"
        echo "fuzz_$name: $(find tests/fuzz/corpus/"$name" -type f | wc -l) inputs in the committed corpus"
    fi
done
exit $status
