#!/usr/bin/env bash
# slurm.sh — tools/slurm/precprobe-sweep.sbatch on a real one-node Slurm (issue 19): the test
# starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge, `make deps-slurm`) as root,
# configured in a temporary folder with their own socket, ports, state and logs, on localhost
# only; submits te-cp-small and the tiny sweep fixture, each as a 4-task job array and the
# dependent merge job; waits for the merge jobs; checks each merge is the unsharded run
# (tests/e2e/same_report.sh, same_sweep.sh); stops the daemons it started. Skips, printing the reason, where Slurm cannot start here: the
# packages absent, not root, or the daemons failing to come up (their logs are printed).
# usage: tests/e2e/slurm.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=$(cd "$(dirname "${1:-bin/precprobe}")" && pwd)/$(basename "${1:-bin/precprobe}")
skip() { echo "slurm.sh: skipped: $*"; exit 0; }
fail() { echo "FAIL slurm: $*"; exit 1; }
for d in munged slurmctld slurmd sbatch scontrol; do
    command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] ||
        skip "$d not installed (make deps-slurm installs slurmctld, slurmd, slurm-client, munge)"
done
[ "$(id -u)" = 0 ] || skip "not root: slurmd must run as root to start jobs"
PATH=$PATH:/usr/sbin

tmp=$(mktemp -d /tmp/precprobe-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
    # the daemons this test started, by their own pids (never by name: others may run Slurm)
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
logs() { for f in "$tmp"/*.log; do echo "--- $f"; tail -15 "$f"; done; }

# munge: its own key, socket and files; munged refuses group- or world-writable folders
mkdir -m 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=128 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
sock=$tmp/munge/munge.socket
munged --foreground --force --socket="$sock" --key-file="$tmp/munge/munge.key" --pid-file="$tmp/munge/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munge/munged.seed" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { logs; skip "munged did not start (log above)"; }

node=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=precprobe-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.stdout.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/slurmd.stdout.log" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 300); do
    if scontrol show node "$node" 2>/dev/null | grep -qE 'State=(IDLE|MIXED)'; then up=1; break; fi
    sleep 0.2
done
[ $up = 1 ] || { logs; scontrol show node "$node" 2>&1 | head -5; skip "slurmctld/slurmd did not bring the node up (logs above)"; }

export PRECPROBE=$bin PRECPROBE_CACHE=$tmp/cache PRECPROBE_RUN_ARGS="--device cpu"
# submits case $1 in 4 shards into $2; prints the merge job's id
submit() {
    local got
    got=$(bash tools/slurm/precprobe-sweep.sbatch "$1" 4 "$2" --cpus-per-task=1 2>&1) || { logs; fail "submission: $got"; }
    echo "$got" >&2
    echo "$got" | sed -n 's/.*merge: job \([0-9]*\).*/\1/p'
}
# waits for job $1 to end; fails unless it completed
wait_job() {
    local state=
    for _ in $(seq 1500); do  # a hang guard (5 minutes), not a timing: the jobs take seconds
        state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
        sleep 0.2
    done
    [ "$state" = COMPLETED ] || { logs; cat "$tmp"/out*/slurm-*.out 2>/dev/null | tail -20; fail "merge job $1 ended $state"; }
}
sweep=tests/data/cases/sweep/tiny.toml
merge_case=$(submit cases/te-cp-small.toml "$tmp/out")
merge_sweep=$(submit "$sweep" "$tmp/out-sweep")
[ -n "$merge_case" ] && [ -n "$merge_sweep" ] || fail "no merge job ids"
wait_job "$merge_case"
wait_job "$merge_sweep"
"$bin" run cases/te-cp-small.toml -q $PRECPROBE_RUN_ARGS --out "$tmp/full" --html "$tmp/full/report.html" >/dev/null 2>&1
[ $? -le 1 ] || fail "unsharded run"
bash tests/e2e/same_report.sh "$tmp/full" "$tmp/out/merged" || fail "the Slurm array's merge is not the unsharded run"
"$bin" run "$sweep" -q $PRECPROBE_RUN_ARGS -o "$tmp/sweep-full" >/dev/null 2>&1; [ $? -le 1 ] || fail "unsharded sweep"
bash tests/e2e/same_sweep.sh "$tmp/sweep-full" "$tmp/out-sweep/merged" || fail "the Slurm sweep's merge is not the unsharded sweep"
echo "ok   slurm: te-cp-small and the tiny sweep, each a 4-task job array + afterok merge job on a one-node Slurm == unsharded"
