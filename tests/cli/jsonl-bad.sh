#!/bin/bash
# Bad input to --batch --jsonl, line by line: each bad line alone gives exit 2, one error
# record on stdout (its line, the message) and the same message on stderr naming the key,
# the value and what is accepted.  Then the options that --jsonl refuses to combine with.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh

# Standard input a directory: bad input (exit 2), said before any line, nothing on stdout; it
# once read as a failed read (exit 1, "standard input:1: Is a directory").
"$BIN" --batch --jsonl -T 8 -d 8 -L 2 <"$tmp" >"$tmp/out" 2>"$tmp/err"
status=$?
check "standard input a directory: exit 2 (got $status), said, nothing on stdout" bash -c \
    "[ $status -eq 2 ] && [ ! -s '$tmp/out' ] && grep -qF -- '--jsonl: standard input is a directory' '$tmp/err'"

refused_line() { # line expected-message-fragment [options...]
    local line=$1 says=$2
    shift 2
    printf '%s\n' "$line" | "$BIN" --batch --jsonl -T 8 -d 8 -L 2 "$@" >"$tmp/out" 2>"$tmp/err"
    local status=$?
    if [ $status -ne 2 ]; then
        echo "  $line: status $status"
        return 1
    fi
    grep -qF -- "attnscope: line 1: $says" "$tmp/err" || {
        echo "  $line: stderr lacks '$says': $(head -c 300 "$tmp/err")"
        return 1
    }
    "$PY" - "$tmp/out" "$says" <<'PY' || { echo "  $line: record: $(head -c 300 "$tmp/out")"; return 1; }
import json, sys
lines = open(sys.argv[1]).read().splitlines()
record = json.loads(lines[0])
sys.exit(0 if len(lines) == 1 and record["line"] == 1 and sys.argv[2] in record["error"]
         and "config" not in record else 1)
PY
}

cases=(
    '{"foo": 1}|unknown key "foo"; accepted: T, d, depth, sigma_qk, attention, mask, window, window_layers, gap, layernorm, skip, heads, head, kv_heads, head_dim, wo, logit_scale, ln_place, ln_scale, ln_eps, norm_gain_offset, qk_norm, qk_norm_place, rope, rope_theta, rope_local_base_freq, rope_fraction, rope_scaling, rope_factor, rope_low_freq_factor, rope_high_freq_factor, rope_original_context, nope_every, logit_softcap, sink, sink_std, skip_gain, branch_gain, mlp, mlp_ratio, mlp_hidden, init, init_std, depth_scale, init_alpha, init_beta, init_c, init_vo_alpha, init_vo_beta, init_query, init_key, init_value, init_output, init_mlp, input, vocab, positions, input_norm, layer, attention_map, seed, seeds (and d_qk, equal to d; and max_time, a bound on the estimated seconds)'
    '{"T": "16"}|"T": accepted a number, found a string'
    '{"gap": 1}|"gap": accepted a string off|center|uniform|deflate|outliers, found a number'
    '{"gap": null}|"gap": accepted a string off|center|uniform|deflate|outliers, found null'
    '{"sink": "none"}|"sink": accepted a number or null (none), found a string'
    '{"sink_std": null}|"sink_std": accepted a number, found null'
    '{"window_layers": 1}|"window_layers": accepted a string (all, a:b or L/G letters), found a number'
    '{"window_layers": "LGX"}|"window_layers": --window-layers '"'"'LGX'"'"': accepted all, a:b'
    '{"attention": "soft"}|"attention": -a/--attention '"'"'soft'"'"': accepted softmax|markov|relu|sigmoid|linear|uniform|identity'
    '{"T": 6.5}|"T": -T/--tokens '"'"'6.5'"'"': accepted a whole number 2..4096'
    '{"T": 1e1}|-T/--tokens 10 exceeds -d/--width 8'
    '{"T": 8.5}|"T": -T/--tokens '"'"'8.5'"'"': accepted a whole number 2..4096'
    '{"seed": 2.5}|"seed": --seed '"'"'2.5'"'"': accepted a whole number 0..9007199254740991'
    'not json|JSON byte 1: expected a value (null?), found '"'"'not'"'"' (a line is one JSON object of settings, as {"T": 64, "d": 64})'
    'True|JSON byte 1: expected a value, found '"'"'T'"'"' (a line is one JSON object of settings'
    $'\x01|JSON byte 1: expected a value, found byte 0x01 (a line is one JSON object of settings'
    '{"depth": 0}|"depth": -L/--depth '"'"'0'"'"': accepted a whole number 1..256'
    '{"sigma_qk": 0}|"sigma_qk": -s/--sigma-qk '"'"'0'"'"': accepted a number 0 < X <= 4'
    '{"seed": -1}|"seed": --seed '"'"'-1'"'"': accepted a whole number 0..9007199254740991'
    '{"seeds": 2000}|"seeds": --seeds '"'"'2000'"'"': accepted a whole number 1..1024'
    '{"T": 16}|-T/--tokens 16 exceeds -d/--width 8'
    '{"layer": 3}|-l/--layer 3: accepted 1..2 (the depth, -L/--depth 2)'
    '{"d": 16, "d_qk": 8}|"d_qk": accepted only the width d = 16'
    '{"T": 8, "T": 8}|JSON byte 10: duplicate key "T"'
    '[{"T": 8}]|expected an object of settings, found an array'
    '"T=8"|expected an object of settings, found a string'
    '{"T": 8,}|JSON byte 9: expected a quoted key'
    '{"T": 8} {"d": 8}|JSON byte 10: text after the value'
    '{"T": 8|JSON byte 9: expected '"','"' or '"'}'"
    $'{"gap": "\xff"}|JSON byte 10: byte 0xff is not UTF-8'
)
for entry in "${cases[@]}"; do
    line=${entry%%|*}
    says=${entry#*|}
    # Bytes outside printable ASCII shown as '?': a raw non-UTF-8 byte would make the log binary.
    check "refused: $(printf '%s' "$line" | LC_ALL=C tr -c '[:print:]' '?')" refused_line "$line" "$says"
done
# Python writes a whole number that went through a float as 8.0: a whole-number setting reads
# it as 8 (the document equals the one of 8), where 8.5 above is refused.
integral_floats() {
    printf '{"T": 8, "d": 8, "d_qk": 8, "depth": 2, "seed": 3, "seeds": 2}\n' |
        "$BIN" --batch --jsonl >"$tmp/whole.jsonl" &&
        printf '{"T": 8.0, "d": 8.0, "d_qk": 8e0, "depth": 2.0, "seed": 3.0, "seeds": 2.0}\n' |
        "$BIN" --batch --jsonl >"$tmp/float.jsonl" &&
        "$PY" - "$tmp/whole.jsonl" "$tmp/float.jsonl" <<'PY'
import json, sys
a, b = (json.loads(open(p).readline()) for p in sys.argv[1:])
varying = {"provenance", "blas_threads", "elapsed_seconds"}
sys.exit(0 if "error" not in b and all(a[k] == b[k] for k in a if k not in varying) else 1)
PY
}
check "accepted: 8.0 for a whole-number setting, read as 8" integral_floats
check "refused: over the memory budget" refused_line '{"T": 4096, "d": 4096}' \
    "T = 4096, d = 4096, depth 2 needs about" --max-memory 1M
# The command line's settings are each line's base: a combination only the base gets wrong
# (the default T = 256 above -d 64, the memory of T = d = 4096 above 1M) is each line's
# to check; lines that set T run, a line that keeps the base gets its error record.
base_combination_per_line() {
    printf '{"T": 16}\n{}\n{"T": 32, "d": 32}\n' |
        "$BIN" --batch --jsonl -d 64 -L 2 >"$tmp/base.jsonl" 2>"$tmp/base.err"
    local status=$?
    [ $status -eq 2 ] || { echo "  exit $status: $(head -c 300 "$tmp/base.err")"; return 1; }
    "$PY" - "$tmp/base.jsonl" <<'PY' || { echo "  records: $(head -c 400 "$tmp/base.jsonl")"; return 1; }
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
ok = (len(r) == 3 and [x["line"] for x in r] == [1, 2, 3]
      and "error" not in r[0] and r[0]["config"]["T"] == 16 and r[0]["config"]["d"] == 64
      and "-T/--tokens 256 exceeds -d/--width 64" in r[1]["error"]
      and "error" not in r[2] and r[2]["config"]["d"] == 32)
sys.exit(0 if ok else 1)
PY
}
check "the command line's T above its d: each line checks its own (lines setting T run)" \
    base_combination_per_line
base_memory_per_line() {
    printf '{"T": 8, "d": 8}\n' | "$BIN" --batch --jsonl -T 4096 -d 4096 --max-memory 1M \
        >"$tmp/mem.jsonl" 2>"$tmp/mem.err" && grep -qF '"T":8' "$tmp/mem.jsonl" ||
        { echo "  $(head -c 300 "$tmp/mem.err")"; return 1; }
}
check "the command line's size above --max-memory: a line that sets a small one runs" \
    base_memory_per_line

refused_option() { refused_running "$BIN" -- "$@"; } # expected-message -- args...
check "a value out of its own range: refused before any line (whatever a line says)" \
    refused_option "-d/--width '0': accepted a whole number 1..4096" -- --batch --jsonl -d 0
check "--jsonl without --batch: exit 2, says so" refused_option \
    "--jsonl: accepted only with --batch" -- --jsonl
check "--jsonl with --export: exit 2, says why" refused_option \
    "--export '$tmp/x': accepted only without --jsonl" -- --batch --jsonl --export "$tmp/x"

finish
