#!/bin/bash
# The screen on a finite checkpoint whose products overflow the double range (W^V and W^O of
# entries ~1e200, so W_VO = W^V W^O has infinities): the network's measures are null from
# layer 1 and the conditioning view's too, never "failed | error: LAPACK failed (info -5)",
# which the conditioning's SVD of a Jacobian with infinities gave.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

settings="-T 8 -d 16 -L 3 --heads 2 --mlp swiglu -n rms --ln-place pre --wo gaussian"
# shellcheck disable=SC2086
"$BIN" $settings --export-weights "$TMP/w" 2>/dev/null
/usr/bin/python3 - "$TMP/w/model.safetensors" "$TMP/huge.safetensors" <<'PYEOF'
import sys
sys.path.insert(0, "tests/cli")
from safetensors_tool import pack, read, values, write
tensors, meta = read(sys.argv[1])
write(sys.argv[2], [(n, d, s, pack("F64", [x * 1e200 if "v_proj" in n or "o_proj" in n else x
                                           for x in values(d, raw)])) for n, d, s, raw in tensors],
      meta)
PYEOF
trace=$TMP/overflow.trace
start 140 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' $settings --weights '$TMP/huge.safetensors' --trace '$trace'"
expect "the status line names the checkpoint" "weights=$TMP/huge\.safetensors"
wait_trace " job-done gen=1 "
check "the run ends without a failure" absent "failed|LAPACK"
press "V: the conditioning view" "κ\(K\)" V
wait_trace " job-done gen=2 "
check "... and its run ends without a failure" absent "failed|LAPACK"
quits "q quits"
finish
