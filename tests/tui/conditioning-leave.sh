#!/bin/bash
# Leaving the conditioning view cancels its job (README: "computed only while it is shown …
# cancellable by any key"): v while the conditioning runs starts a job without it at once, the
# superseded conditioning never finishes, and the stable rank's status says nothing about it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh

trace=$TMP/leave.trace
# T = d = 256: each layer's Lanczos estimate takes seconds, so v lands while it runs.
start 120 40 "env LANG=$UTF8 LC_ALL=$UTF8 '$BIN' -T 256 -d 256 -L 2 --no-confirm --trace '$trace'"
check "the first job is done" wait_trace "job-done gen=1 "
keys V
check "V: the conditioning starts" wait_trace "conditioning-start gen=2 slot=0"
keys v
check "v: a job without the conditioning starts" wait_trace "job-start gen=3 "
check "the superseded conditioning stopped" wait_trace "extra-cancel gen=2 conditioning"
check "the new job is done" wait_trace "job-done gen=3 "
expect "the stable rank is shown, computed" "computed in [0-9]+ ms"
check "the superseded conditioning never finished" bash -c "! grep -q 'conditioning-done gen=2 ' '$trace'"
check "the new job computed no conditioning" bash -c "! grep -q 'conditioning-start gen=3 ' '$trace'"
quits "q quits"
finish
