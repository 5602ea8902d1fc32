#!/bin/bash
# Each key acts visibly or says why it does nothing here: ; (window layers) with a full mask
# names what the pattern would do and the key to a window mask; y outside the attention-map
# view says that the map it sets is drawn in that view alone.  (tmux reads a bare ; as its
# own command separator: the key is sent by its byte, 0x3b.)
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 32 -d 32 -L 2"
expect "computes" "computed in [0-9]+ ms"
press "; with a full mask says why the pattern does nothing" "m to a window" -H 3b
press "y outside the map view says where the map is drawn" \
    "attention map product: drawn in the attention-map view alone" y
quits "q quits"
finish
