#!/bin/bash
# A checkpoint's sliding window (mistral, sliding_window 40: w = 39) survives t then T: t
# halves T and takes w under it, T doubles T back and brings w back to the config's 39, as
# t brings back down the d that T raised.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

config=$TMP/mw.json
printf '%s\n' '{"model_type":"mistral","hidden_size":64,"num_attention_heads":4,' \
    '"num_key_value_heads":4,"num_hidden_layers":2,"sliding_window":40}' >"$config"

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 64 -L 2 --hf-config '$config'"
expect "the config's window is w = 39" "computed in [0-9]+ ms"
expect "status: T = 64, w = 39" "T=64 .*w=39"
press "t halves T and lowers w under it, saying so" "window w lowered to 31" t
expect "T = 32, w = 31" "T=32 .*w=31"
press "T doubles T back and raises w back, saying so" \
    "window w raised back to 39 \(T had lowered it\)" T
expect "T = 64, w = 39 again" "T=64 .*w=39"
quits "q quits"
finish
