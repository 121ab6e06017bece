#!/usr/bin/env bash
# The Slurm deployment, run for real: starts a one-node Slurm cluster on this machine, submits
# deploy/slurm-array.sh with sbatch as a job array of shards over a region of an example script,
# checks the result with `geogen finish-tiles`, and compares every tile, byte for byte, with one
# plain `geogen tiles` run of the same region. Prints the wall time of both.
#
# Everything the cluster needs lives in one temporary directory: a munge key made for the run,
# munged's socket, slurm.conf (this machine's name, CPUs and memory; processes tracked without
# cgroups), the controller's state, slurmd's spool, the logs and the tiles. munged, slurmctld and
# slurmd run in the foreground as children of this script; on exit, whatever happened, the job is
# cancelled, the daemons and anything they left running are stopped, and the directory is removed
# (SLURM_TEST_KEEP=1 keeps it).
#
# Runs as root (the daemons launch job steps as the submitting user); installs Debian's slurm-wlm
# and munge when they are missing.
#
# Usage: scripts/slurm-test.sh [path/to/geogen]   (default: cargo build --release -p geogen-cli)
# Settings: SLURM_TEST_SCRIPT (examples/drainage.ggs; relative to the repository), SLURM_TEST_SIZE
# (1024: the region is the whole SIZE x SIZE map), SLURM_TEST_TILE (256), SLURM_TEST_SHARDS (4),
# SLURM_TEST_TIMEOUT (seconds the array may take, 300).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/sbin:/sbin

script=${SLURM_TEST_SCRIPT:-examples/drainage.ggs}
size=${SLURM_TEST_SIZE:-1024}
tile=${SLURM_TEST_TILE:-256}
shards=${SLURM_TEST_SHARDS:-4}
timeout_s=${SLURM_TEST_TIMEOUT:-300}

fail() {
    echo "slurm-test: FAILED: $*" >&2
    exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

[ "$(id -u)" = 0 ] || fail "run it as root: slurmd launches the job's tasks as their user, and missing packages are installed"
[ -f "$script" ] || fail "no script $script"
script_path=$(realpath "$script")

if ! command -v munged >/dev/null || ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v sbatch >/dev/null; then
    echo "== installing Debian's slurm-wlm and munge"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

geogen=${1:-}
if [ -z "$geogen" ]; then
    cargo build --release -q -p geogen-cli
    geogen=target/release/geogen
fi
[ -x "$geogen" ] || fail "no geogen binary at $geogen"
geogen=$(realpath "$geogen")

# The temporary directory must be searchable by everyone: munged refuses a socket in a directory
# that others cannot reach.
work=$(mktemp -d /tmp/geogen-slurm-test.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/munge" "$work/etc" "$work/state" "$work/spool" "$work/log" "$work/jobs"
conf=$work/etc/slurm.conf
export SLURM_CONF=$conf
# Every process this test starts (the daemons, and through sbatch the job's tasks) carries this
# variable, so that the clean-up can find the job steps that outlive their slurmd.
marker=GEOGEN_SLURM_TEST=$work
munged_pid='' ctld_pid='' slurmd_pid='' job=''

show_logs() {
    for log in "$work"/log/* "$work"/jobs/*; do
        [ -s "$log" ] || continue
        # A daemon's output repeats its log file; it is shown only when there is no log file.
        case $log in *.out) [ -s "${log%.out}.log" ] && continue ;; esac
        echo "---- ${log#"$work"/} (last lines)" >&2
        grep -v -e pmix -e 'MPI: ' "$log" | tail -n 15 >&2
    done
}

stop_pid() {
    local pid=$1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

cleanup() {
    local status=$?
    set +e
    trap - EXIT INT TERM
    if [ -n "$job" ] && [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
        scancel "$job" 2>/dev/null
        for _ in $(seq 100); do
            [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    [ "$status" = 0 ] || show_logs
    stop_pid "$slurmd_pid"
    stop_pid "$ctld_pid"
    stop_pid "$munged_pid"
    # Job steps (slurmstepd and the tasks under it) do not end with slurmd.
    for proc in /proc/[0-9]*; do
        if grep -qzx -- "$marker" "$proc/environ" 2>/dev/null; then
            kill -9 "${proc#/proc/}" 2>/dev/null
        fi
    done
    if [ "${SLURM_TEST_KEEP:-}" = 1 ]; then
        echo "slurm-test: kept $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Two free ports on the loopback interface for slurmctld and slurmd, so that the test never meets a
# Slurm already running here.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

echo "== munged with a key of its own ($work/munge)"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 600 "$work/munge/munge.key"
socket=$work/munge/munge.socket
env "$marker" munged --foreground --key-file="$work/munge/munge.key" --socket="$socket" \
    --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" >"$work/log/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 100); do
    munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 && break
    kill -0 "$munged_pid" 2>/dev/null || fail "munged stopped"
    sleep 0.1
done
munge -n -S "$socket" | unmunge -S "$socket" >/dev/null || fail "munged does not answer on $socket"

node=$(uname -n | cut -d. -f1)
cpus=$(nproc)
memory_mib=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
cat >"$conf" <<EOF
# A one-node cluster for scripts/slurm-test.sh, on $node.
ClusterName=geogentest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/state/slurmctld.pid
SlurmdPidFile=$work/spool/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# The node is what this file says, however the hardware's sockets and cores are counted.
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mib State=UNKNOWN
PartitionName=geogen Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

echo "== slurmctld and slurmd (node $node: $cpus CPUs, $memory_mib MiB; ports $ctld_port, $slurmd_port)"
env "$marker" slurmctld -D -f "$conf" >"$work/log/slurmctld.out" 2>&1 &
ctld_pid=$!
env "$marker" slurmd -D -f "$conf" -N "$node" >"$work/log/slurmd.out" 2>&1 &
slurmd_pid=$!
state=''
for _ in $(seq 150); do
    kill -0 "$ctld_pid" 2>/dev/null || fail "slurmctld stopped"
    kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd stopped"
    state=$(sinfo -h -N -n "$node" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] || fail "the node is not idle after 30 s: $(sinfo -h -N -o '%N %t %E' 2>&1)"
sinfo

echo "== sbatch deploy/slurm-array.sh: $script, ${size}x$size in tiles of $tile, $shards shards"
region=0,0,$size,$size
submitted=$(now_ms)
job=$(env -u SHARDS -u MEMORY_LIMIT "$marker" GEOGEN="$geogen" REGION="$region" TILE="$tile" \
    MAP_SIZE="${size}x$size" SEED=7 FORMATS=png16,colored \
    sbatch --parsable --array="0-$((shards - 1))" --cpus-per-task=1 --mem=1G --chdir="$work" \
    --output="$work/jobs/task-%a.log" deploy/slurm-array.sh "$script_path" "$work/sharded")
job=${job%%;*}
echo "job array $job"
# Polled here rather than with sbatch --wait, which looks every few seconds: the wall time below
# is the array's own.
while [ -n "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; do
    [ $(($(now_ms) - submitted)) -lt $((timeout_s * 1000)) ] ||
        fail "the array has not finished after $timeout_s s:"$'\n'"$(squeue -j "$job" 2>&1)"
    kill -0 "$ctld_pid" 2>/dev/null || fail "slurmctld stopped"
    sleep 0.1
done
array_ms=$(($(now_ms) - submitted))

# Every task completed with exit code 0 (the controller keeps finished jobs for MinJobAge, 5 min).
tasks=$(scontrol -o show job "$job" |
    sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\) .*StartTime=\([^ ]*\) EndTime=\([^ ]*\) .*/\1 \4 \5 \2 \3/p' |
    sort -n)
echo "$tasks" | sed 's/^/task /'
[ "$(echo "$tasks" | grep -c ' COMPLETED 0:0$')" = "$shards" ] ||
    fail "not every one of the $shards tasks completed with exit code 0"
for i in $(seq 0 $((shards - 1))); do
    log=$work/jobs/task-$i.log
    grep -q "(shard $i of $shards)" "$log" || fail "task $i did not render shard $i of $shards: $(cat "$log")"
    sed 's/^/  /' "$log"
done

echo "== geogen finish-tiles"
"$geogen" finish-tiles "$work/sharded" || fail "finish-tiles found the sharded directory incomplete or inconsistent"

echo "== plain geogen tiles of the same region ($(nproc) threads)"
started=$(now_ms)
"$geogen" tiles "$script_path" --region="$region" --tile="$tile" --map-size="${size}x$size" --seed=7 \
    --format=png16,colored -o "$work/plain"
plain_ms=$(($(now_ms) - started))

echo "== every tile, byte for byte"
(cd "$work/plain" && ls tile_*) >"$work/plain.list"
(cd "$work/sharded" && ls tile_*) >"$work/sharded.list"
diff "$work/plain.list" "$work/sharded.list" >&2 || fail "the sharded run wrote other files than the plain run"
per_side=$(((size + tile - 1) / tile))
[ "$(grep -c '^tile_.*_main\.png$' "$work/plain.list")" = $((per_side * per_side)) ] ||
    fail "expected $((per_side * per_side)) tiles of the map main"
while read -r name; do
    cmp "$work/plain/$name" "$work/sharded/$name" >&2 || fail "$name differs between the sharded and the plain run"
done <"$work/plain.list"
echo "$(wc -l <"$work/plain.list") files identical ($((per_side * per_side)) tiles)"

echo "== wall time: job array of $shards shards (1 CPU each, from sbatch to the last task's end)" \
    "$(seconds "$array_ms") s; plain geogen tiles ($(nproc) threads) $(seconds "$plain_ms") s"
echo "slurm-test: ok"
