#!/usr/bin/env bash
# Stop the single-node Slurm cluster started by start-slurm.sh (uses pid files only).
# Env knob: SLURM_STOP_MUNGE=0 keeps munged running (default 1: stop it too).
set -u

# shellcheck source=tests/integration/pidfiles.sh
source "$(dirname "$0")/../pidfiles.sh"

# graceful: ask slurmctld to stop itself and all slurmd
timeout 10 scontrol shutdown >/dev/null 2>&1 || true
sleep 0.5
stop_pidfile /run/slurmd.pid slurmd
stop_pidfile /run/slurmctld.pid slurmctld
if [ "${SLURM_STOP_MUNGE:-1}" = 1 ]; then
  stop_pidfile /run/munge/munged.pid munged
fi
exit 0
