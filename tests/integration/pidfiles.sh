# Shell helpers of the test clusters' start and stop scripts (sourced, not run): daemons are known by their pid
# files only. Daemons are re-parented to PID 1, which may leave them as zombies for a while after a stop, so
# `pgrep -x slurmd` is not a reliable liveness test.
# shellcheck shell=bash

# live (non-zombie) process named $2 whose pid is in pid file $1?
alive() {
  local pid
  [ -s "$1" ] || return 1
  pid="$(cat "$1")"
  [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = "$2" ] || return 1
  ! ps -o stat= -p "$pid" | grep -q Z
}

# stop the process named $2 whose pid is in pid file $1 (if it is that process), wait until it is gone, drop the file
stop_pidfile() {
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
