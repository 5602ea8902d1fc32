#!/bin/bash
# The bad-input catalogue (issue 5), through the real binary: every numeric option with
# every kind of bad value, every enum with unknown names, and every kind of malformed
# preset exits 2 with nothing on stdout and a message naming the option (or FILE:LINE),
# the value and what is accepted.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

refused() { refused_running "$BIN" --batch -- "$@"; } # expected-stderr-fragment... -- args...

# One check for a group of refusals: ok when none of them failed.
tally() { # failures ok-description not-ok-description
    if [ "$1" -eq 0 ]; then ok "$2"; else not_ok "$3"; fi
}

# Option, its spelling in messages, and what the message says is accepted.
numeric=(
    "--tokens|-T/--tokens|accepted a whole number 2..4096"
    "--width|-d/--width|accepted a whole number 1..4096"
    "--depth|-L/--depth|accepted a whole number 1..256"
    "--sigma-qk|-s/--sigma-qk|accepted a number 0 < X <= 4"
    "--window|-w/--window|accepted a whole number 1..4095"
    "--layer|-l/--layer|accepted a whole number 1..256"
    "--seed|--seed|accepted a whole number 0..9007199254740991"
    "--seeds|--seeds|accepted a whole number 1..1024"
    "--heads|--heads|accepted a whole number 1..4096"
    "--head|--head|accepted a whole number 1..4096"
    "--skip-gain|--skip-gain|accepted a number 0 <= X <= 64"
    "--branch-gain|--branch-gain|accepted a number 0 <= X <= 64"
    "--mlp-ratio|--mlp-ratio|accepted a whole number 1..16"
    "--init-vo-alpha|--init-vo-alpha|accepted a number 0 <= X <= 100"
    "--init-vo-beta|--init-vo-beta|accepted a number -50 < X <= 50"
    "--max-memory|--max-memory|accepted a size like 512M, 2G or 300 (MiB), above 0 and at most 16777215T"
    "--sink|--sink|accepted a number -1e+06 <= X <= 1e+06 or none"
    "--sink-std|--sink-std|accepted a number 0 <= X <= 1000"
    "--rope-factor|--rope-factor|accepted a number 0 < X <= 1e+06"
    "--rope-low-freq-factor|--rope-low-freq-factor|accepted a number 0 < X <= 1e+06"
    "--rope-high-freq-factor|--rope-high-freq-factor|accepted a number 0 < X <= 1e+06"
    "--rope-original-context|--rope-original-context|accepted a whole number 1..16777216"
)
values=("" 0 -1 1e400 99999999999999999999 16777216T abc 12x nan inf -inf " 5" "5 " 0x10)
for entry in "${numeric[@]}"; do
    IFS='|' read -r option spelled accepted <<<"$entry"
    bad=0
    for value in "${values[@]}"; do
        # 0 is a seed like any other.
        [ "$option" = --seed ] && [ "$value" = 0 ] && continue
        # A gain of 0 is ReZero's.
        case "$option:$value" in --skip-gain:0 | --branch-gain:0) continue ;; esac
        # α₂ = 0 is W^V W^O = −β₂I; β₂ has either sign.
        case "$option:$value" in --init-vo-alpha:0 | --init-vo-beta:0 | --init-vo-beta:-1) continue ;; esac
        # A sink is any logit (0 is gpt-oss's); its spread may be 0.
        case "$option:$value" in --sink:0 | --sink:-1 | --sink-std:0) continue ;; esac
        refused "$spelled '$value'" "$accepted" -- "$option" "$value" || bad=$((bad + 1))
    done
    tally "$bad" "$option: every bad value (${#values[@]}: empty, 0, negative, huge, garbage, nan, inf) exits 2 naming it" \
        "$option: $bad bad values not refused as they should be"
done

enums=(
    "--attention|-a/--attention|softmax|markov|relu|sigmoid|linear|uniform|identity"
    "--mask|-m/--mask|full|causal|window|window-causal"
    "--gap|-g/--gap|off|center|uniform|deflate|outliers"
    "--layernorm|-n/--layernorm|none|rms|ln"
    "--skip|-k/--skip|none|plain|scaled"
    "--wo|--wo|identity|gaussian|orthogonal"
    "--logit-scale|--logit-scale|sqrt|linear"
    "--ln-place|--ln-place|post|pre|peri|output"
    "--ln-scale|--ln-scale|unit|sqrt-d"
    "--mlp|--mlp|none|relu|gelu|tanh"
    "--init|--init|normal|xavier|orthogonal|gpt2|small-init|mup|deepnorm|cutting-skip|mimetic"
    "--init-query|--init-query|scheme|normal|xavier|orthogonal|identity|zero"
    "--init-key|--init-key|scheme|normal|xavier|orthogonal|identity|zero"
    "--init-value|--init-value|scheme|normal|xavier|orthogonal|identity|zero"
    "--init-output|--init-output|scheme|normal|xavier|orthogonal|identity|zero"
    "--init-mlp|--init-mlp|scheme|normal|xavier|orthogonal|identity|zero"
    "--input-norm|--input-norm|unit|sqrt-d"
    "--rope-scaling|--rope-scaling|none|linear|llama3"
)
for entry in "${enums[@]}"; do
    option=${entry%%|*}
    rest=${entry#*|}
    spelled=${rest%%|*}
    accepted=${rest#*|}
    bad=0
    for value in "" bogus SOFTMAX "full " 1 "$(printf 'x\377')"; do
        refused "$spelled '$value'" "accepted $accepted" -- "$option" "$value" || bad=$((bad + 1))
    done
    tally "$bad" "$option: unknown names exit 2 and list the accepted ones" \
        "$option: $bad unknown names not refused as they should be"
done
# The block's relations: heads divide the width, the shown head is one of them.
check "--heads not dividing d" refused "--heads 3: accepted a divisor of -d/--width 64" -- -T 32 -d 64 --heads 3
check "--heads above d" refused "--heads 128: accepted a divisor of -d/--width 64" -- -T 32 -d 64 --heads 128
check "--head above --heads" refused "--head 5: accepted 1..4 (the heads, --heads 4)" -- -T 32 -d 64 --heads 4 --head 5
check "preset: heads not dividing d" refused "--heads 3: accepted a divisor of -d/--width 64" -- --preset "$(printf 'tokens = 32\nwidth = 64\nheads = 3\n' >"$tmp/heads.preset"; echo "$tmp/heads.preset")"
# The initialisation's relations: mimetic's W^O is a factor, not orthogonal; a W^O under
# --wo orthogonal is orthogonal; only a square matrix is the identity.
check "--init mimetic with --wo orthogonal" refused "--wo orthogonal: accepted identity or gaussian with --init mimetic" -- --init mimetic --wo orthogonal -T 16 -d 16
for choice in normal xavier zero; do
    check "--init-output $choice with --wo orthogonal" refused "--init-output $choice: accepted scheme, orthogonal or identity with --wo orthogonal" -- --wo orthogonal --init-output "$choice" -T 16 -d 16
done
check "--init-mlp identity with --mlp-ratio 4" refused "--init-mlp identity: accepted with --mlp-ratio 1 only" -- --mlp relu --init-mlp identity -T 16 -d 16
check "preset: --init-mlp identity with --mlp-ratio 2" refused "--init-mlp identity: accepted with --mlp-ratio 1 only (W1 and W2 are 2·d×d" -- --preset "$(printf 'tokens = 16\nwidth = 16\nmlp = gelu\nmlp-ratio = 2\ninit-mlp = identity\n' >"$tmp/mlp.preset"; echo "$tmp/mlp.preset")"
# The seed range: every seed seed..seed+seeds-1 is written exactly as a JSON number (<= 2^53 - 1),
# one rule for the options, a preset and --jsonl (grid.sh checks grid's).
seed_range="--seed 9007199254740990 with --seeds 4: seeds 9007199254740990..9007199254740993 pass the largest seed 9007199254740991"
largest="accepted --seed up to 9007199254740988 with --seeds 4"
check "--seed 2^53-2 --seeds 4: refused, naming the largest seed accepted" refused "$seed_range" "$largest" -- \
    -T 4 -d 4 -L 1 --seed 9007199254740990 --seeds 4
check "preset: a seed range past 2^53-1" refused "$seed_range" "$largest" -- --preset \
    "$(printf 'tokens = 4\nwidth = 4\ndepth = 1\nseed = 9007199254740990\nseeds = 4\n' >"$tmp/seeds.preset"; echo "$tmp/seeds.preset")"
jsonl_seed_range() {
    echo '{"T": 4, "d": 4, "depth": 1, "seed": 9007199254740990, "seeds": 4}' |
        "$BIN" --batch --jsonl >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 2 ] && grep -qF -- "\"error\":\"$seed_range" "$tmp/out" && grep -qF -- "$largest" "$tmp/out" ||
        { echo "  --jsonl: $(head -c 300 "$tmp/out")"; return 1; }
}
check "--jsonl: a seed range past 2^53-1 is the line's error" jsonl_seed_range
last_seed_range() { # the largest accepted runs, and records its seed exactly
    "$BIN" --batch -T 4 -d 4 -L 1 --seed 9007199254740988 --seeds 4 >"$tmp/out" 2>"$tmp/err" &&
        grep -qF '"seed":9007199254740988,"seeds":4' "$tmp/out"
}
check "--seed 9007199254740988 --seeds 4 (the last seed 2^53-1) runs" last_seed_range
square_mlp() { "$BIN" --batch --mlp relu --mlp-ratio 1 --init-mlp identity -T 16 -d 16 -L 2 >/dev/null; }
check "--init-mlp identity with --mlp-ratio 1 runs" square_mlp
# llama3 blends between C/high and C/low: no frequency exists otherwise.  (A scaling without
# RoPE runs, with a warning: tests/cli/ignored-options.sh.)
check "--rope-low-freq-factor not below --rope-high-freq-factor" refused \
    "--rope-low-freq-factor 4 with --rope-high-freq-factor 2: accepted low < high" -- \
    --rope half --rope-scaling llama3 --rope-low-freq-factor 4 --rope-high-freq-factor 2 -T 16 -d 16
check "a value cut in the message still says what is accepted" \
    refused "-T/--tokens '$(printf '1%.0s' {1..40})...'" "accepted a whole number 2..4096" -- \
    --tokens "$(printf '1%.0s' {1..100})x"

# Presets: FILE:LINE: message, exit 2, nothing on stdout.
preset() { # name content(printf format) -> path
    printf "$2" >"$tmp/$1.preset"
    echo "$tmp/$1.preset"
}
check "preset: unknown key" refused "$(preset unknown 'tokens = 64\ncolour = red\n'):2: unknown key 'colour'; accepted: tokens, width" -- --preset "$tmp/unknown.preset"
# The list is whole, to the last setting (a fixed 400-byte list once cut it short).
check "preset: unknown key lists every setting" refused "input-norm, layer, attention-map, seed, seeds" -- --preset "$tmp/unknown.preset"
check "preset: duplicate key" refused "$(preset twice 'width = 64\n\nwidth = 32\n'):3: duplicate key 'width'" -- --preset "$tmp/twice.preset"
check "preset: missing '='" refused "$(preset noeq '# x\ntokens 64\n'):2: expected 'key = value', found no '='" -- --preset "$tmp/noeq.preset"
check "preset: empty key" refused "$(preset nokey ' = 64\n'):1: unknown key ''" -- --preset "$tmp/nokey.preset"
check "preset: bad value names the option" refused "$(preset value 'tokens = 12x\n'):1: -T/--tokens '12x': accepted a whole number 2..4096" -- --preset "$tmp/value.preset"
check "preset: NUL byte" refused "$(preset nul 'tokens = 6\0004\n'):1: contains a NUL byte" -- --preset "$tmp/nul.preset"
check "preset: 0xFF in a value" refused "$(preset ff 'tokens = 64\nwidth = 64\377\n'):2: byte 0xff at column 11 is not UTF-8" -- --preset "$tmp/ff.preset"
check "preset: 0xFF in a comment" refused "$(preset ffc '# \377\ntokens = 64\n'):1: byte 0xff at column 3 is not UTF-8" -- --preset "$tmp/ffc.preset"
check "preset: a Latin-1 byte (not UTF-8)" refused "$(preset latin1 '# caf\351\n'):1: byte 0xe9 at column 6 is not UTF-8" -- --preset "$tmp/latin1.preset"
check "preset: a control byte" refused "$(preset ctl 'tokens = 64\033[2J\n'):1: contains control byte 0x1b" -- --preset "$tmp/ctl.preset"
utf8_ok() { # UTF-8 in comments is text
    printf '# σ_qk = 1 — the default\ntokens = 16\nwidth = 16\ndepth = 1\n' >"$tmp/utf8.preset"
    "$BIN" --batch --preset "$tmp/utf8.preset" >"$tmp/out" 2>"$tmp/err" && "$PY" tests/cli/contract.py 16 1 <"$tmp/out"
}
check "preset: UTF-8 comments are accepted" utf8_ok
# A byte-order mark (Windows editors write one) starts the file, not its first key: the
# document is the one of the same preset without it.  Anywhere else it is named.
bom_ok() {
    printf 'tokens = 16\nwidth = 16\ndepth = 1\n' >"$tmp/plain.preset"
    printf '\357\273\277tokens = 16\nwidth = 16\ndepth = 1\n' >"$tmp/bom.preset"
    "$BIN" --batch --preset "$tmp/plain.preset" >"$tmp/plain.json" &&
        "$BIN" --batch --preset "$tmp/bom.preset" >"$tmp/bom.json" 2>"$tmp/err" &&
        cmp -s "$tmp/plain.json" "$tmp/bom.json" || { echo "  $(head -c 300 "$tmp/err")"; return 1; }
}
check "preset: a UTF-8 byte-order mark at the start is accepted (the same document)" bom_ok
check "preset: a byte-order mark on a later line is named" refused \
    "$(preset bom2 'tokens = 16\n\357\273\277width = 16\n'):2: unknown key" \
    "(it holds a byte-order mark, U+FEFF, accepted only at the file's start)" -- --preset "$tmp/bom2.preset"
long_line() {
    { printf 'tokens = 64\nseed = '; head -c $((10 << 20)) /dev/zero | tr '\0' 7; printf '\n'; } >"$tmp/long.preset"
    refused "$tmp/long.preset:2: --seed '7777777777777777777777777777777777777777...': accepted a whole number 0..9007199254740991" -- --preset "$tmp/long.preset"
}
check "preset: a 10 MB line, refused with the accepted range in the message" long_line
mkdir "$tmp/dir.preset"
check "preset: a directory" refused "'$tmp/dir.preset': Is a directory" -- --preset "$tmp/dir.preset"
# Named without a slash, a directory is looked up as a preset's name: the message says it is a
# directory, not that there is no such file.
relative_directory() {
    local bin
    bin=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
    (cd "$tmp" && "$bin" --batch --preset dir.preset >out 2>err
        [ $? -eq 2 ] && [ ! -s out ] &&
        grep -qF -- "--preset 'dir.preset': a directory, not a preset file, nor a preset of that name" err) ||
        { echo "  stderr: $(head -c 300 "$tmp/err")"; return 1; }
}
check "preset: a directory named without a slash" relative_directory
# Where a name was looked for, without shipped presets: the user's directory, and that none
# were found, as a sentence (main: "in DIR or (no shipped presets found)").
check "preset: a name not found, no shipped presets: the message says where it looked" \
    bash -c 'mkdir -p "$2/home" && ATTNSCOPE_PRESETS="$2/none" HOME="$2/home" XDG_CONFIG_HOME= "$1" --batch --preset nosuch 2>&1 >/dev/null |
        grep -qxF "attnscope: --preset '"'"'nosuch'"'"': no such file, nor a preset of that name in $2/home/.config/attnscope/presets (no shipped presets were found) (accepted: a preset file, or the name of one there without .preset)"' _ "$BIN" "$tmp"
check "preset: missing" refused "--preset '$tmp/none.preset': No such file or directory" -- --preset "$tmp/none.preset"
preset unreadable 'tokens = 64\n' >/dev/null
chmod 000 "$tmp/unreadable.preset"
if [ "$(id -u)" -eq 0 ]; then
    skip "preset: unreadable file (chmod 000)" "running as root, which reads it anyway"
else
    check "preset: unreadable file (chmod 000)" refused "--preset '$tmp/unreadable.preset': Permission denied" -- --preset "$tmp/unreadable.preset"
fi
finish
