#!/usr/bin/env bash
# Stop the Grid Engine started by start-gridengine.sh (its execd, then its qmaster, by pid file).
set -u
GE_SPOOL="${GE_SPOOL:-/var/spool/modak-gridengine}"
for pidfile in "$GE_SPOOL"/execd/*/execd.pid "$GE_SPOOL/qmaster/qmaster.pid"; do
  [ -s "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  case "$(ps -o comm= -p "$pid" 2>/dev/null)" in
    sge_execd|sge_qmaster) kill "$pid" 2>/dev/null ;;
    *) continue ;;
  esac
  for _ in $(seq 1 50); do
    ps -o stat= -p "$pid" 2>/dev/null | grep -qv Z || break
    sleep 0.1
  done
done
exit 0
