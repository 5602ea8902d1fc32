#!/bin/bash
# scripts/slurm-array.sh on a real single-node Slurm that this test starts (munged, slurmctld
# and slurmd with a private key, socket, ports and state under a temporary directory, run as
# root): a job array of 4 tasks over a grid of 12 shard lines, gathered by merge, gives the
# numbers of the same grid run in one process.  Skipped (never passed) where Slurm or munge
# is not installed (scripts/install-deps.sh slurm) or cannot start here.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
cannot_run() { skip_script "a job array on a single-node Slurm, gathered by merge" "$1"; }
for tool in munged slurmctld slurmd sbatch sinfo; do
    command -v "$tool" >/dev/null 2>&1 || cannot_run "$tool is not installed (scripts/install-deps.sh slurm)"
done
[ "$(id -u)" -eq 0 ] || cannot_run "starting slurmd needs root"

chmod 755 "$tmp" # munged wants its socket's directory searchable by all
pids=()
# Every wait on an outside service has a deadline of its own, whatever the service does: a
# daemon that ignores SIGTERM for 10 s gets SIGKILL.
cleanup() {
    local pid deadline=$((SECONDS + 10))
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/state" "$tmp/spool"
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 600 "$tmp/munge.key"
munged -F -f --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
    --seed-file="$tmp/munged.seed" --log-file="$tmp/munged.log" >"$tmp/munged.out" 2>&1 &
pids+=($!)
# Ports of our own, so that another Slurm on this machine (or another run of this test)
# is not disturbed.
port=$((20000 + (RANDOM % 2000) * 2))
node=$(hostname -s)
cat >"$tmp/slurm.conf" <<CONF
ClusterName=attnscope-test
SlurmctldHost=$node
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=attnscope Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
deadline=$((SECONDS + 10))
while [ ! -S "$tmp/munge.sock" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
# 30 s in all, each sinfo at most 5 of them: sinfo waits for slurmctld's message timeout
# (10 s by default, times its retries) when the controller is not answering.
up=
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
    if timeout 5 sinfo -h -o %T 2>/dev/null | grep -q idle; then up=1; break; fi
    sleep 0.5
done
if [ -z "$up" ]; then
    tail -n 5 "$tmp"/*.out "$tmp"/*.log 2>/dev/null | sed 's/^/  /'
    cannot_run "a single-node Slurm did not come up here within 30 s (its logs above)"
fi
ok "munged, slurmctld and slurmd are up: node $node idle"

"$BIN" grid 'T=8,16 gap=off,center seeds=6' -d 16 -L 3 --shards 3 >"$tmp/grid.jsonl"
"$BIN" --batch --jsonl <"$tmp/grid.jsonl" >"$tmp/one-process.jsonl"
(cd "$tmp" && timeout 120 sbatch --wait --array=0-3 -o "$tmp/task-%a.out" \
    "$OLDPWD/scripts/slurm-array.sh" --tasks 4 --bin "$BIN" "$tmp/grid.jsonl" "$tmp/results") >"$tmp/sbatch.out" 2>&1
check "sbatch --array=0-3 --wait: every task exit 0 ($(tail -c 200 "$tmp/sbatch.out"))" test $? -eq 0
check "4 task files, no partial one left" test "$(ls "$tmp/results" | grep -c '^task-[0-3]\.jsonl$')" -eq 4 -a \
    -z "$(ls -A "$tmp/results" | grep partial)"
check "the tasks hold the 12 lines, each once, in 4 chunks of 3" test "$(cat "$tmp"/results/task-*.jsonl | wc -l)" -eq 12 -a \
    "$(wc -l <"$tmp/results/task-2.jsonl")" -eq 3
ids() { "$PY" -c 'import json, sys
print(sorted({json.loads(l)["provenance"].get("SLURM_ARRAY_TASK_ID") for f in sys.argv[1:] for l in open(f)}))' "$@"; }
check "each record names its array task" test "$(ids "$tmp"/results/task-*.jsonl)" = "['0', '1', '2', '3']"
check "gathered by merge: the numbers of one process" \
    cmp -s <(merged_numbers "$tmp"/results/task-*.jsonl) <(merged_numbers "$tmp/one-process.jsonl")

finish
