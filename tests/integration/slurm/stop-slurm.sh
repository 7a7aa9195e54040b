#!/usr/bin/env bash
# Stop the single-node Slurm cluster started by start-slurm.sh (uses pid files only).
# Env knob: SLURM_STOP_MUNGE=0 keeps munged running (default 1: stop it too).
set -u

stop_pidfile() {  # $1 = pid file, $2 = expected process name
  local f="$1" name="$2" pid
  [ -s "$f" ] || return 0
  pid="$(cat "$f")"
  if [ -n "$pid" ] && [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = "$name" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
      ps -o stat= -p "$pid" 2>/dev/null | grep -qv Z || break   # gone or zombie
      sleep 0.1
    done
  fi
  rm -f "$f"
}

# graceful: ask slurmctld to stop itself and all slurmd
timeout 10 scontrol shutdown >/dev/null 2>&1 || true
sleep 0.5
stop_pidfile /run/slurmd.pid slurmd
stop_pidfile /run/slurmctld.pid slurmctld
if [ "${SLURM_STOP_MUNGE:-1}" = 1 ]; then
  stop_pidfile /run/munge/munged.pid munged
fi
exit 0
