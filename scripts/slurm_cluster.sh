#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for rlpilot's SLURM tests (and for trying
# `rlpilot train launch --slurm` without a cluster).
#
#   scripts/slurm_cluster.sh start    install Debian's Slurm when absent, start it, wait until ready
#   scripts/slurm_cluster.sh stop     stop the daemons this script started
#   scripts/slurm_cluster.sh env      print `export SLURM_CONF=...` for a shell or CI to eval
#
# One node (this host) with a declared GPU GRES (character devices standing in for GPUs: Slurm
# only counts them), one partition, and slurmdbd on a private MariaDB so that `sacct` reports
# jobs and their steps as on a real cluster. No systemd: every daemon runs in the foreground of
# a background process whose pid is kept under the state folder, and `stop` ends only those.
# Everything (config, spool, logs, database) lives under RLPILOT_SLURM_DIR; ports are fixed ones
# away from Slurm's defaults so that a real Slurm on the machine is not disturbed.
set -euo pipefail

STATE=${RLPILOT_SLURM_DIR:-/tmp/rlpilot-slurm}
GPUS=${RLPILOT_SLURM_GPUS:-4}
PARTITION=${RLPILOT_SLURM_PARTITION:-gpu}
MAX_TIME=${RLPILOT_SLURM_MAX_TIME:-01:00:00}
ACCOUNT=${RLPILOT_SLURM_ACCOUNT:-research}
CLUSTER=rlpilot
REMOTE_PARTITION=big REMOTE_NODES=gpu-node-[1-2]
CTLD_PORT=16817 SLURMD_PORT=16818 DBD_PORT=16819 DB_PORT=13306 DEAD_PORT=16899
READY_TIMEOUT=${RLPILOT_SLURM_READY_TIMEOUT:-300}
export SLURM_CONF=$STATE/slurm.conf
export PATH=$PATH:/usr/sbin:/sbin  # the daemons live in sbin, often not on a CI user's PATH

log() { echo "slurm_cluster: $*" >&2; }
# A pid that runs (a zombie does not: nothing may reap our daemons once this script has exited).
alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]; }

install_packages() {
    local missing=()
    for tool in munged slurmctld slurmd sbatch slurmdbd mariadbd; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    [ ${#missing[@]} -eq 0 ] && return
    log "installing Slurm from Debian's registry (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client slurmdbd mariadb-server >/dev/null
}

write_config() {
    mkdir -p "$STATE"/{spool,state,log,gpu,db,munge}
    local node host
    host=$(hostname -s)
    node=$(slurmd -C | head -n 1)  # this machine's NodeName line: CPUs, sockets, memory
    for ((i = 0; i < GPUS; i++)); do
        [ -e "$STATE/gpu/nvidia$i" ] || mknod "$STATE/gpu/nvidia$i" c 1 3
    done
    cat >"$STATE/slurm.conf" <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$host
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStorageEnforce=associations
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=300
KillWait=5
$node Gres=gpu:$GPUS State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=$MAX_TIME State=UP
# Two bigger nodes that never come up (no slurmd on their port): a partition whose jobs would run
# on other machines, for the checks that depend on where the job runs.
NodeName=$REMOTE_NODES NodeAddr=127.0.0.1 Port=$DEAD_PORT CPUs=2 RealMemory=1000 Gres=gpu:8 State=DOWN Reason="not built"
PartitionName=$REMOTE_PARTITION Nodes=$REMOTE_NODES MaxTime=7-00:00:00 State=UP
EOF
    cat >"$STATE/gres.conf" <<EOF
AutoDetect=off
NodeName=$host Name=gpu File=$STATE/gpu/nvidia[0-$((GPUS - 1))]
NodeName=$REMOTE_NODES Name=gpu Count=8
EOF
    cat >"$STATE/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$STATE/log/slurmdbd.log
PidFile=$STATE/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$STATE/slurmdbd.conf"
}

# Start `name` (a foreground daemon) in the background, unless the one we started still runs.
daemon() {
    local name=$1
    shift
    if [ -f "$STATE/$name.bgpid" ] && alive "$(cat "$STATE/$name.bgpid")"; then
        return
    fi
    setsid "$@" >"$STATE/log/$name.out" 2>&1 </dev/null &
    echo $! >"$STATE/$name.bgpid"
}

wait_for() {
    local what=$1 deadline=$((SECONDS + READY_TIMEOUT))
    shift
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then
            log "$what did not come up within ${READY_TIMEOUT}s; logs in $STATE/log"
            tail -n 20 "$STATE"/log/*.out >&2 || true
            return 1
        fi
        sleep 0.25
    done
}

node_idle() { sinfo -h -N -o '%t' | grep -qx 'idle'; }
db() { mariadb --no-defaults -S "$STATE/db/mysqld.sock" -uroot "$@"; }

start() {
    local began=$SECONDS
    install_packages
    write_config
    # The Slurm clients reach munged on its default socket; a munged already serving it is used.
    if ! munge -n >/dev/null 2>&1; then
        mkdir -p /run/munge
        daemon munged munged -F -f --log-file="$STATE/log/munged.log" --pid-file="$STATE/munge/munged.pid" \
            --seed-file="$STATE/munge/munged.seed"
        wait_for munged munge -n
    fi
    if [ ! -d "$STATE/db/data/mysql" ]; then
        mariadb-install-db --no-defaults --datadir="$STATE/db/data" --user=root \
            --auth-root-authentication-method=normal --skip-test-db >"$STATE/log/db-init.log" 2>&1
    fi
    # Durability does not matter for a test database; without fsyncs slurmdbd creates its tables fast.
    daemon mariadb mariadbd --no-defaults --datadir="$STATE/db/data" --user=root --bind-address=127.0.0.1 \
        --port=$DB_PORT --socket="$STATE/db/mysqld.sock" --pid-file="$STATE/db/mysqld.pid" \
        --log-error="$STATE/log/mariadb.log" --skip-name-resolve --skip-log-bin --innodb-buffer-pool-size=64M \
        --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-flush-method=nosync
    wait_for mariadb db -e 'select 1'
    db -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
           GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
    daemon slurmdbd slurmdbd -D
    wait_for slurmdbd sacctmgr -n list cluster
    if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
        sacctmgr -i add cluster "$CLUSTER" >/dev/null
        sacctmgr -i add account "$ACCOUNT" Cluster="$CLUSTER" >/dev/null
        sacctmgr -i add user "$(id -un)" Account="$ACCOUNT" >/dev/null
    fi
    daemon slurmctld slurmctld -D
    daemon slurmd slurmd -D
    wait_for slurmctld sinfo -h
    # A node drained by an earlier unclean stop comes back.
    scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
    wait_for "the node" node_idle
    log "up in $((SECONDS - began))s: partition $PARTITION, $GPUS GPUs, account $ACCOUNT; export SLURM_CONF=$SLURM_CONF"
}

stop() {
    # Reverse order of start; only the processes this script started, by their recorded pid.
    for name in slurmd slurmctld slurmdbd mariadb munged; do
        local pidfile="$STATE/$name.bgpid"
        [ -f "$pidfile" ] || continue
        local pid
        pid=$(cat "$pidfile")
        if alive "$pid"; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 40); do alive "$pid" || break; sleep 0.25; done
            alive "$pid" && kill -9 "$pid" 2>/dev/null
        fi
        rm -f "$pidfile"
    done
    log "stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    env) echo "export SLURM_CONF=$SLURM_CONF" ;;
    *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
