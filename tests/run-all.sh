#!/bin/bash
# Runs every test of the trees given (first: the plain build), counts, and ends with the
# line "N passed, M failed" that CI reads.
#   plain tree:      unit tests (cmocka), tests/cli/*.sh, tests/tui/*.sh, valgrind
#   build-asan tree: unit tests and tests/cli/*.sh under ASan+UBSan
#   build-tsan tree: the threaded tests (test_worker*, test_export_job) under TSan
#   build-fuzz tree: libFuzzer regressions and a short fuzzing pass
set -u
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
skipped=0
failures=()

run() { # name, command...
    local name=$1
    shift
    local log
    log=$(mktemp)
    # Count cases, not programs: cmocka's "[       OK ]" and the scripts' "ok N" lines; a
    # skipped case ("[  SKIPPED ]", "ok N # SKIP why") is counted as skipped, never passed.
    local status=0 good bad skip
    "$@" >"$log" 2>&1 || status=$?
    # Logs are read as text (-a): a test's raw non-UTF-8 byte must not hide its lines.
    good=$(grep -aE '^\[       OK \]|^ok [0-9]' "$log" | grep -acv '# SKIP')
    bad=$(grep -acE '^\[  FAILED  \] test|^not ok [0-9]' "$log")
    # cmocka names a skipped test twice (as it runs and in its summary): each counts once.
    grep -aE '^\[  SKIPPED \] |^ok [0-9]+ .*# SKIP' "$log" | grep -av 'test(s)' | sort -u >"$log.skips"
    skip=$(wc -l <"$log.skips")
    if [ "$skip" -gt 0 ]; then
        skipped=$((skipped + skip))
        sed "s|^|SKIP  $name: |" "$log.skips"
    fi
    rm -f "$log.skips"
    if [ "$status" -eq 0 ] && [ "$good" -eq 0 ] && [ "$skip" -gt 0 ]; then
        printf 'SKIP  %s (%d skipped)\n' "$name" "$skip"
    elif [ "$status" -eq 0 ]; then
        passed=$((passed + (good > 0 ? good : 1)))
        printf 'PASS  %s (%d)\n' "$name" "$((good > 0 ? good : 1))"
    else
        passed=$((passed + good))
        failed=$((failed + (bad > 0 ? bad : 1)))
        failures+=("$name")
        printf 'FAIL  %s\n' "$name"
        sed 's/^/      | /' "$log" | tail -n 60
    fi
    rm -f "$log"
}

for tree in "$@"; do
    case "$tree" in
    *fuzz*)
        # The committed corpus and regressions only, each input once: deterministic.
        # `make fuzz` explores.
        shopt -s nullglob
        for name in options preset json safetensors token_ids hf_config; do
            inputs=(tests/fuzz/corpus/"$name"/* tests/fuzz/regressions/"$name"/*)
            run "fuzz_$name, ${#inputs[@]} committed inputs" "$tree/fuzz_$name" "${inputs[@]}"
        done
        shopt -u nullglob
        ;;
    *tsan*)
        export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
        for t in "$tree"/tests/test_worker* "$tree"/tests/test_export_job; do
            [ -x "$t" ] && run "$t" env OPENBLAS_NUM_THREADS=1 "$t"
        done
        ;;
    *)
        export ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1"
        for t in "$tree"/tests/test_*; do
            case "$t" in *.o | *.d) continue ;; esac
            [ -x "$t" ] && run "$t" "$t"
        done
        for s in tests/cli/*.sh; do
            [ -x "$s" ] && run "$s [$tree]" env BIN="$tree/attnscope" "$s"
        done
        case "$tree" in
        *asan*) ;;
        *)
            for s in tests/tui/*.sh; do
                [ -x "$s" ] && run "$s" env BIN="$tree/attnscope" "$s"
            done
            for args in "-T 32 -d 48 -L 3" "-T 16 -d 16 -L 2 -g outliers -m window --seeds 2" \
                "-T 24 -d 24 -L 2 -a markov -g deflate -m causal"; do
                # shellcheck disable=SC2086
                run "valgrind --batch $args" valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
                    --error-exitcode=1 "$tree/attnscope" --batch $args
            done
            ;;
        esac
        ;;
    esac
done

if [ ${#failures[@]} -gt 0 ]; then
    echo "Failed:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
