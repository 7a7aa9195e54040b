#!/usr/bin/env bash
# Start a Slurm cluster of several nodes on this one machine (Debian 12, root, no systemd), beside the
# read-back cluster of tests/integration/slurm/start-slurm.sh and independent of it:
#   - its own configuration /etc/slurm-multinode/slurm.conf (clients reach it through SLURM_CONF), its own ports
#     (slurmctld 6917, one slurmd port per node from 6921), state, spool, log and pid paths, and its own munged
#     (socket /run/munge-multinode/munge.socket.2, AuthInfo), so that stopping the read-back cluster (which stops
#     the system munged) leaves it running;
#   - nodes mn1..mnN (NodeHostname=localhost NodeAddr=127.0.0.1 Port=<own>), one slurmd each, in partition
#     'multinode'; MpiDefault=none (Slurm's default): a job script must name its PMI itself (srun --mpi=...).
#   - every slurmd runs in its own mount namespace with a private tmpfs on /tmp, as on real nodes whose /tmp is
#     node-local: Slurm's PMIx plugin creates /tmp/spmix_appdir_<uid>_<job>.<step> on each node and fails with
#     "File exists" when two nodes share /tmp. Each slurmd also has its own UTS namespace and host name (mn1,
#     ...): Open MPI names its shared-memory files in /dev/shm after the host name and the local rank, so with
#     one host name two nodes' ranks map each other's segments and crash. /dev/shm itself stays shared: the
#     nodes share one kernel (one boot id), so UCX (MPICH's transport) takes all ranks for one machine and
#     joins ranks of two nodes through shared memory. The cost: what lies under the host's /tmp is invisible
#     to jobs.
#     Job directories therefore live under /var/tmp/modak-multinode (MULTINODE_SHARED), which every node sees,
#     as a cluster's shared file system; binding parts of the host's /tmp back would hide that a job wrote into
#     a node-local directory.
#   - two more partitions for placement (tests/integration/multinode/test_placement.py), which differ in speed:
#     'fast' on the nodes above, 'slow' on nodes of their own (mn4.. after them) whose slurmd, and so every job
#     step it starts, runs in a cgroup with a CPU quota (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max); neither
#     preempts the other, 'urgent' preempts 'fast' as it does 'multinode'.
#   - two partitions of the resilience tests (tests/integration/multinode/test_resilience.py), on nodes of their own
#     after the slow ones, so that their faults reach no other job and their jobs run beside the time-limit ones:
#     'preempt' (two nodes, which 'urgent' also covers) and 'nodeloss' (three nodes: a job of two loses one and
#     starts again on the other two).
# Idempotent: when the cluster already runs with the same configuration it does nothing and prints
# "multinode: already running"; otherwise it (re)starts it and prints "multinode: started".
# Env knobs:
#   MULTINODE_NODES=N       number of nodes (default 3)
#   MULTINODE_CPUS=N        CPUs each node announces (default 4; more than the hardware is allowed, jobs share cores)
#   MULTINODE_MEM_MB=N      memory each node announces (default 2000)
#   MULTINODE_SLOW_NODES=N  nodes of the partition 'slow' (default 3)
#   MULTINODE_SLOW_QUOTA=P  the CPU each slow node may use, in per cent of one CPU (default 25)
#   The partitions 'preempt' (2 nodes) and 'nodeloss' (3 nodes) come after the slow nodes.
set -euo pipefail
# the daemons started below must not inherit a lock the caller holds (flock /work/wt/multinode.lock ...): a
# munged holding it would keep it for ever
for fd in "/proc/$$/fd"/*; do
  fd="${fd##*/}"
  if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

NODES="${MULTINODE_NODES:-3}"
CPUS="${MULTINODE_CPUS:-4}"
MEM_MB="${MULTINODE_MEM_MB:-2000}"
SLOW="${MULTINODE_SLOW_NODES:-3}"
SLOW_QUOTA="${MULTINODE_SLOW_QUOTA:-25}"
PREEMPT=2
NODELOSS=3
ALL=$((NODES + SLOW + PREEMPT + NODELOSS))
ETC=/etc/slurm-multinode
CONF=$ETC/slurm.conf
RUN=/run/slurm-multinode
STATE=/var/lib/slurm-multinode
LOG=/var/log/slurm-multinode
MUNGE_RUN=/run/munge-multinode
MUNGE_SOCKET=$MUNGE_RUN/munge.socket.2
SHARED=/var/tmp/modak-multinode
CTLD_PORT=6917
FIRST_SLURMD_PORT=6921

if [ "$(id -u)" != 0 ]; then
  echo "start-multinode.sh: must run as root (it installs packages and starts daemons)" >&2
  exit 2
fi

# shellcheck source=tests/integration/pidfiles.sh
source "$(dirname "$0")/../pidfiles.sh"

# 1. install what is missing; libpmix2 (install-mpi.sh) before any slurmd starts, or its pmix plugin does not load
bash "$(dirname "$0")/install-mpi.sh"
# one apt-get at a time on the machine (the suite's workers install at the same time)
"$(dirname "$0")/../../../scripts/apt-install" slurmctld slurmd slurm-client munge

# 2. configuration
mkdir -p "$ETC" "$RUN" "$STATE/slurmctld" "$LOG" "$SHARED"
chmod 1777 "$SHARED"
NODE_LINES=""
NAMES=""
SLOW_NAMES=""
PREEMPT_NAMES=""
NODELOSS_NAMES=""
for i in $(seq 1 "$ALL"); do
  NODE_LINES="${NODE_LINES}NodeName=mn$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((FIRST_SLURMD_PORT + i - 1)) CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
"
  if [ "$i" -le "$NODES" ]; then NAMES="${NAMES:+$NAMES,}mn$i"
  elif [ "$i" -le $((NODES + SLOW)) ]; then SLOW_NAMES="${SLOW_NAMES:+$SLOW_NAMES,}mn$i"
  elif [ "$i" -le $((NODES + SLOW + PREEMPT)) ]; then PREEMPT_NAMES="${PREEMPT_NAMES:+$PREEMPT_NAMES,}mn$i"
  else NODELOSS_NAMES="${NODELOSS_NAMES:+$NODELOSS_NAMES,}mn$i"; fi
  mkdir -p "$STATE/slurmd/mn$i"
  # node names resolve, as on a cluster (a job's MASTER_ADDR is its first node's name); every node is this host
  if ! getent hosts "mn$i" >/dev/null; then
    echo "127.0.0.1 mn$i  # modak multi-node test cluster" >> /etc/hosts
  fi
done
# the script's own hash in the config: a changed way of starting the nodes restarts them too
SELF_SHA="$(cat "$0" "$(dirname "$0")/../pidfiles.sh" | sha256sum | cut -c1-16)"
NEW_CONF="$(cat <<CONFEOF
# written by start-multinode.sh $SELF_SHA; the slow nodes' CPU quota: $SLOW_QUOTA % of a CPU each
ClusterName=multinode
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmUser=root
SlurmdUser=root
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd/%n
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MinJobAge=300
SlurmdParameters=config_overrides
PlugStackConfig=$ETC/plugstack.conf
SlurmdTimeout=30
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
${NODE_LINES}PartitionName=multinode Nodes=$NAMES Default=YES MaxTime=INFINITE State=UP PriorityTier=1 GraceTime=30
PartitionName=urgent Nodes=$NAMES,$PREEMPT_NAMES MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
PartitionName=fast Nodes=$NAMES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=slow Nodes=$SLOW_NAMES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=preempt Nodes=$PREEMPT_NAMES MaxTime=INFINITE State=UP PriorityTier=1 GraceTime=30
PartitionName=nodeloss Nodes=$NODELOSS_NAMES MaxTime=INFINITE State=UP PriorityTier=1
CONFEOF
)"

nodes_alive() {
  local i
  for i in $(seq 1 "$ALL"); do alive "$RUN/slurmd-mn$i.pid" slurmd || return 1; done
}

# the cgroup of a slow node's slurmd (its job steps are its children): at most SLOW_QUOTA % of one CPU
quota_cgroup() {
  local dir
  if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then            # cgroup v1, the cpu controller's own hierarchy
    dir=/sys/fs/cgroup/cpu/modak-multinode-$1
    mkdir -p "$dir"
    echo 100000 > "$dir/cpu.cfs_period_us"
    echo $((SLOW_QUOTA * 1000)) > "$dir/cpu.cfs_quota_us"
  elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then   # cgroup v2
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
    dir=/sys/fs/cgroup/modak-multinode-$1
    mkdir -p "$dir"
    echo "$((SLOW_QUOTA * 1000)) 100000" > "$dir/cpu.max"
  else
    echo "start-multinode.sh: no writable cgroup cpu controller for the slow nodes' CPU quota" >&2
    return 1
  fi
  echo "$dir"
}
if [ -s "$CONF" ] && [ "$(cat "$CONF")" = "$NEW_CONF" ] && alive "$RUN/slurmctld.pid" slurmctld && nodes_alive \
   && alive "$MUNGE_RUN/munged.pid" munged \
   && SLURM_CONF=$CONF scontrol ping 2>/dev/null | grep -q 'is UP'; then
  echo "multinode: already running"
  SLURM_CONF=$CONF sinfo -N
  exit 0
fi

# something differs or is down: stop what runs and start all afresh
bash "$(dirname "$0")/stop-multinode.sh"
printf '%s\n' "$NEW_CONF" > "$CONF.new"
mv "$CONF.new" "$CONF"
: > "$ETC/plugstack.conf"

# 3. a munged of its own (same key as the system's, which the munge package creates)
mkdir -p "$MUNGE_RUN" /etc/munge /var/lib/munge /var/log/munge
chown munge:munge "$MUNGE_RUN" /etc/munge /var/lib/munge /var/log/munge
chmod 0755 "$MUNGE_RUN"
chmod 0700 /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile=/etc/munge/munge.key --force
  else
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi
runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCKET" --pid-file="$MUNGE_RUN/munged.pid" \
  --log-file=/var/log/munge/munged-multinode.log --seed-file=/var/lib/munge/munged-multinode.seed
for _ in $(seq 1 50); do munge -S "$MUNGE_SOCKET" -n 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1 && break; sleep 0.1; done
munge -S "$MUNGE_SOCKET" -n | unmunge -S "$MUNGE_SOCKET" >/dev/null

# 4. slurmctld from a clean state, then one slurmd per node, each with a private /tmp
rm -rf "${STATE:?}/slurmctld/"*
SLURM_CONF=$CONF slurmctld -i -f "$CONF"
for i in $(seq 1 "$ALL"); do
  rm -rf "${STATE:?}/slurmd/mn$i/"*
  cgroup=""
  if [ "$i" -gt "$NODES" ] && [ "$i" -le $((NODES + SLOW)) ]; then cgroup="$(quota_cgroup "mn$i")"; fi
  # shellcheck disable=SC2016  # $1, $2 and $3 are sh's arguments
  SLURM_CONF=$CONF unshare -m -u --propagation private \
    sh -c '{ [ -z "$3" ] || echo $$ > "$3/cgroup.procs"; } && hostname "$2" \
           && mount -t tmpfs -o mode=1777 tmpfs /tmp && exec slurmd -f "$1" -N "$2"' \
    slurmd "$CONF" "mn$i" "$cgroup"
done

# 5. wait until every node is idle
for _ in $(seq 1 150); do
  if [ "$(SLURM_CONF=$CONF sinfo -h -p multinode -o '%T %D' 2>/dev/null)" = "idle $NODES" ] \
     && [ "$(SLURM_CONF=$CONF sinfo -h -p slow -o '%T %D' 2>/dev/null)" = "idle $SLOW" ] \
     && [ "$(SLURM_CONF=$CONF sinfo -h -p preempt -o '%T %D' 2>/dev/null)" = "idle $PREEMPT" ] \
     && [ "$(SLURM_CONF=$CONF sinfo -h -p nodeloss -o '%T %D' 2>/dev/null)" = "idle $NODELOSS" ]; then
    echo "multinode: started"
    SLURM_CONF=$CONF sinfo -N
    exit 0
  fi
  sleep 0.2
done
echo "the multi-node cluster did not become idle; logs:" >&2
tail -n 20 "$LOG"/*.log >&2 || true
exit 1
