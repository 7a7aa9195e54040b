#!/usr/bin/env bash
# Stop the multi-node cluster of start-multinode.sh: its slurmctld, its slurmd and its own munged, by their
# pid files only (the read-back cluster and the system munged are left alone).
set -u
RUN=/run/slurm-multinode
MUNGE_RUN=/run/munge-multinode

# shellcheck source=tests/integration/pidfiles.sh
source "$(dirname "$0")/../pidfiles.sh"

for f in "$RUN"/slurmd-*.pid; do
  [ -e "$f" ] && stop_pidfile "$f" slurmd
done
stop_pidfile "$RUN/slurmctld.pid" slurmctld
stop_pidfile "$MUNGE_RUN/munged.pid" munged
# the slow nodes' cgroups (start-multinode.sh), once their slurmd and its job steps are gone
for dir in /sys/fs/cgroup/cpu/modak-multinode-* /sys/fs/cgroup/modak-multinode-*; do
  [ -d "$dir" ] && rmdir "$dir" 2>/dev/null
done
exit 0
