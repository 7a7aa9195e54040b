#!/usr/bin/env bash
# Stop the multi-node cluster of start-multinode.sh: its slurmctld, its slurmd and its own munged, by their
# pid files only (the read-back cluster and the system munged are left alone).
set -u
RUN=/run/slurm-multinode
MUNGE_RUN=/run/munge-multinode

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

for f in "$RUN"/slurmd-*.pid; do
  [ -e "$f" ] && stop_pidfile "$f" slurmd
done
stop_pidfile "$RUN/slurmctld.pid" slurmctld
stop_pidfile "$MUNGE_RUN/munged.pid" munged
exit 0
