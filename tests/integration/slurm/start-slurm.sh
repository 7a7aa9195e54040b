#!/usr/bin/env bash
# Start a single-node Slurm cluster on 127.0.0.1 (Debian 12, run as root, no systemd),
# with the Torque/PBS wrappers (qsub, qstat, qdel) and the spank_pbs plugin.
# Idempotent: installs packages only if missing, rewrites the config, and starts
# munged / slurmctld / slurmd only if they are not already answering.
# Env knobs:
#   SLURM_AUTH=munge|none   (default munge; auth/none also works with Slurm 22.05)
#   SLURM_CLEAN=1           (default 1: wipe job state so job IDs restart at 1)
#   SLURM_CPUS=N            CPUs the node announces (default: nproc). Larger than the hardware is allowed
#                           (SlurmdParameters=config_overrides): jobs then share the real cores.
#   SLURM_MEM_MB=N          memory the node announces (default 2000)
#   SLURM_PARTITIONS="a b"  extra partitions besides the default 'debug'
#   SLURM_NODE_NAME=NAME    name of the node that runs jobs (default localhost; slurmd 22.05 refuses a node named
#                           'localhost' next to other nodes: "fatal: Duplicated NodeHostName node01")
#   SLURM_DOWN_NODES="a b"  more nodes (plain names, e.g. 'node01 node02 ssd') that never run a slurmd: they stay
#                           DOWN, so jobs that need them are accepted and wait (held jobs are read back there)
#   SLURM_DOWN_CPUS=N       CPUs of each of those nodes (default: SLURM_CPUS)
#   SLURM_DOWN_MEM_MB=N     memory of each of those nodes (default: SLURM_MEM_MB)
#   SLURM_DOWN_GPUS=N       GPUs (gres gpu) each of those nodes announces (default 0)
#   SLURM_DOWN_GPU_TYPE=T   the type of those GPUs (gres gpu:T:N; default none)
#   SLURM_DOWN_FEATURES=a,b node features of those nodes (for --constraint; default none)
#   SLURM_GPUS=N            GPUs (gres gpu, counted, no device file) of the running node (default 0)
set -euo pipefail

SLURM_AUTH="${SLURM_AUTH:-munge}"
SLURM_CLEAN="${SLURM_CLEAN:-1}"
NODE="${SLURM_NODE_NAME:-localhost}"
CONF=/etc/slurm/slurm.conf

if [ "$(id -u)" != 0 ]; then
  echo "start-slurm.sh: must run as root (it installs packages and starts daemons)" >&2
  exit 2
fi

# shellcheck source=tests/integration/pidfiles.sh
source "$(dirname "$0")/../pidfiles.sh"

# 1. install (only when missing)
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
   || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null || ! command -v qsub >/dev/null; then
  # one apt-get at a time on the machine (the suite's workers install at the same time)
  "$(dirname "$0")/../../../scripts/apt-install" slurmctld slurmd slurm-client munge slurm-wlm-torque
fi

# 2. directories, key, config
mkdir -p /etc/slurm/plugstack.conf.d /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm \
  /run/munge /etc/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /etc/munge /var/lib/munge /var/log/munge
chmod 0755 /run/munge
chmod 0700 /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  # the munge package's postinst normally creates it; recreate if missing
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile=/etc/munge/munge.key --force
  else
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi

if [ "$SLURM_AUTH" = none ]; then AUTH=auth/none; CRED=cred/none; else AUTH=auth/munge; CRED=cred/munge; fi
CPUS="${SLURM_CPUS:-$(nproc)}"
MEM_MB="${SLURM_MEM_MB:-2000}"
DOWN_NODES="${SLURM_DOWN_NODES:-}"
DOWN_GPUS="${SLURM_DOWN_GPUS:-0}"
GPUS="${SLURM_GPUS:-0}"
gres() { [ "$2" -gt 0 ] && echo " Gres=gpu:$1$2" || true; }
ALL_NODES="$NODE"
NODE_LINES="NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB$(gres "" "$GPUS") State=UNKNOWN"
addr=2
for name in $DOWN_NODES; do
  ALL_NODES="$ALL_NODES,$name"
  # an address of its own where no slurmd listens: the controller's pings fail at once, the node stays DOWN
  NODE_LINES="$NODE_LINES
NodeName=$name NodeAddr=127.0.0.$addr CPUs=${SLURM_DOWN_CPUS:-$CPUS} RealMemory=${SLURM_DOWN_MEM_MB:-$MEM_MB}\
$(gres "${SLURM_DOWN_GPU_TYPE:+$SLURM_DOWN_GPU_TYPE:}" "$DOWN_GPUS")${SLURM_DOWN_FEATURES:+ Feature=$SLURM_DOWN_FEATURES} State=DOWN"
  addr=$((addr + 1))
done
PARTITION_LINES="PartitionName=debug Nodes=$ALL_NODES Default=YES MaxTime=INFINITE State=UP"
for part in ${SLURM_PARTITIONS:-}; do
  PARTITION_LINES="$PARTITION_LINES
PartitionName=$part Nodes=$ALL_NODES MaxTime=INFINITE State=UP"
done
cat > "$CONF" <<CONFEOF
ClusterName=localcluster
SlurmctldHost=localhost(127.0.0.1)
AuthType=$AUTH
CredType=$CRED
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmUser=root
SlurmdUser=root
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MinJobAge=300
EnforcePartLimits=ALL
SlurmdParameters=config_overrides
GresTypes=gpu
$NODE_LINES
$PARTITION_LINES
CONFEOF

# counted GPUs of the running node (no device files: jobs see the count, not a device)
if [ "$GPUS" -gt 0 ]; then
  echo "NodeName=$NODE Name=gpu Count=$GPUS" > /etc/slurm/gres.conf
else
  rm -f /etc/slurm/gres.conf
fi

# PBS environment (PBS_JOBID, PBS_O_WORKDIR, ...) inside jobs submitted through the qsub wrapper
SPANK_PBS="$(find /usr/lib -name spank_pbs.so -print -quit 2>/dev/null || true)"
if [ -n "$SPANK_PBS" ]; then
  echo "required $SPANK_PBS" > /etc/slurm/plugstack.conf.d/pbs.conf
  [ -s /etc/slurm/plugstack.conf ] || echo 'include /etc/slurm/plugstack.conf.d/*.conf' > /etc/slurm/plugstack.conf
fi

# 3. munged (needed only for auth/munge)
if [ "$SLURM_AUTH" != none ]; then
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    munge -n | unmunge >/dev/null
  fi
fi

# 4. slurmctld + slurmd (both daemonise themselves)
if ! scontrol ping 2>/dev/null | grep -q 'is UP'; then
  if [ "$SLURM_CLEAN" = 1 ]; then
    rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/*
    slurmctld -i
  else
    slurmctld
  fi
fi
if ! alive /run/slurmd.pid slurmd; then
  slurmd -N "$NODE"        # -N: node name independent of `hostname`
fi

# 5. wait until the node is idle (or mixed/allocated when jobs survived a warm restart)
for _ in $(seq 1 100); do
  if sinfo -h -n "$NODE" -o '%T' 2>/dev/null | grep -Eqx 'idle|mixed|allocated'; then
    sinfo
    exit 0
  fi
  sleep 0.2
done
echo "slurm did not become idle; logs:" >&2
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
