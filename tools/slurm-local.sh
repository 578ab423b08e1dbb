#!/usr/bin/env bash
# A real single-node SLURM for tests (make test-slurm, tests/test_slurm.py), from Debian's packages:
#   apt-get install slurm-wlm munge          (slurmctld, slurmd, slurm-client; no slurmdbd: see below; `start`
#                                            installs them when missing, as root)
#   tools/slurm-local.sh start | stop | status | env
# Everything lives under one directory, SMTBENCH_SLURM_DIR (default /tmp/smtbench-slurm-$UID): munge's key and
# socket, slurm.conf, the controller's state, the spool, logs and pid files. Nothing is written under /etc or /run,
# no systemd: munged, slurmctld and slurmd are daemonised by this script with pid files in that directory, and `stop`
# cancels every job, stops the daemons by those pids and removes the directory. Clients (sbatch, squeue, scancel,
# the Snakemake executor plugin) find the cluster through SLURM_CONF: `eval "$(tools/slurm-local.sh env)"`.
#
# The node is this machine as `slurmd -C` sees it (all its cores and memory), in one partition `local`; jobs run as
# the submitting user, at nice 19 (slurmd runs niced and jobs inherit it: this is a shared benchmark machine).
# Accounting is off (no slurmdbd/MariaDB): the executor plugin's status command is squeue (profile slurm-smoke,
# `slurm-status-command: squeue`), which sees finished jobs for MinJobAge = 1 h; on a real cluster with slurmdbd the
# plugin's default, sacct, is used instead.
set -euo pipefail

DIR=${SMTBENCH_SLURM_DIR:-/tmp/smtbench-slurm-$(id -u)}
PORT=${SMTBENCH_SLURM_PORT:-6817}   # slurmctld; slurmd listens on PORT+1
CONF=$DIR/slurm.conf
SOCK=$DIR/munge/munge.socket.2
PARTITION=local

die() { echo "slurm-local: $*" >&2; exit 1; }

need() {  # Debian's packages, installed when missing (as root with apt-get; SLURM_NO_APT=1: only say what is missing)
    local p missing=""
    for p in munged mungekey slurmctld slurmd sinfo sbatch squeue scancel; do
        command -v "$p" > /dev/null || [ -x "/usr/sbin/$p" ] || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "${SLURM_NO_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
        die "missing:$missing (apt-get install slurm-wlm munge)"
    fi
    echo "slurm-local: installing slurm-wlm and munge (missing:$missing)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge > /dev/null
}

alive() {  # alive PIDFILE: the process of a pid file is running
    local pid
    pid=$(cat "$1" 2> /dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null
}

write_conf() {
    local node host
    node=$(/usr/sbin/slurmd -C | head -n 1)   # NodeName=<host> CPUs=.. Boards=.. ... RealMemory=..
    host=${node#NodeName=}; host=${host%% *}
    cat > "$CONF" <<EOF
# written by tools/slurm-local.sh (a single-node test cluster; removed by 'stop')
ClusterName=smtbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
    need
    if alive "$DIR/run/slurmctld.pid"; then echo "slurm-local: already running ($CONF)"; return 0; fi
    mkdir -p "$DIR"/{munge,state,spool,run,log}
    chmod 700 "$DIR/munge"
    [ -s "$DIR/munge/munge.key" ] || /usr/sbin/mungekey --create --keyfile="$DIR/munge/munge.key" 2> /dev/null ||
        dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge/munge.key"
    /usr/sbin/munged --force --socket="$SOCK" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/run/munged.pid" \
        --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
    write_conf
    SLURM_CONF=$CONF /usr/sbin/slurmctld -f "$CONF" -c
    SLURM_CONF=$CONF nice -n 19 /usr/sbin/slurmd -f "$CONF"
    export SLURM_CONF=$CONF
    local i
    for i in $(seq 60); do
        if sinfo -h -p "$PARTITION" -o '%t' 2> /dev/null | grep -qE '^(idle|mix|alloc)'; then
            echo "slurm-local: up (SLURM_CONF=$CONF, partition $PARTITION)"
            return 0
        fi
        sleep 1
    done
    tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
    die "the node did not come up within 60 s (logs above; 'tools/slurm-local.sh stop' cleans up)"
}

stop() {
    [ -d "$DIR" ] || { echo "slurm-local: not running"; return 0; }
    export SLURM_CONF=$CONF
    if alive "$DIR/run/slurmctld.pid"; then
        scancel --partition="$PARTITION" 2> /dev/null || true
        local i
        for i in $(seq 30); do   # let slurmd kill the jobs' processes (KillWait 5 s) before it goes
            [ -z "$(squeue -h -t running,completing,pending -p "$PARTITION" -o %i 2> /dev/null)" ] && break
            sleep 1
        done
    fi
    local d f pid
    for d in slurmd slurmctld munged; do
        f=$DIR/run/$d.pid
        if alive "$f"; then
            pid=$(cat "$f")
            kill "$pid"
            for i in $(seq 30); do kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
            kill -0 "$pid" 2> /dev/null && kill -9 "$pid"
        fi
    done
    rm -rf "$DIR"
    echo "slurm-local: stopped, $DIR removed"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status)
        if alive "$DIR/run/slurmctld.pid" && alive "$DIR/run/slurmd.pid"; then
            SLURM_CONF=$CONF sinfo; exit 0
        fi
        echo "slurm-local: not running"; exit 1 ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
