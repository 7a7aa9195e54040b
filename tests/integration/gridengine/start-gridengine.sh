#!/usr/bin/env bash
# Start a single-host Son of Grid Engine 8.1.9 (Debian's gridengine-master/-exec/-client) as root, no systemd.
#
# Debian's gridengine-client conflicts with slurm-wlm-torque (both ship /usr/bin/qsub, qstat, qdel), which the
# Slurm tests need. So the four Grid Engine packages are downloaded with apt-get and unpacked into a private
# prefix ($GE_PREFIX) instead of being installed; the clients are used from $GE_PREFIX/usr/lib/gridengine with
# SGE_ROOT, SGE_CELL and the ports in the environment (the file $GE_ROOT/env.sh sets them).
#
# Grid Engine is strict about host names: the name the host gives itself must be what the address a client
# connects from resolves to. Here 127.0.0.1 reads back as 'localhost' while the host calls itself e.g. 'vm';
# the cell's host_aliases file says they are one host (nothing in /etc/hosts or the network is changed).
#
# Env knobs: GE_SLOTS (slots of the queue, default 4), GE_CLEAN=1 (default: a fresh cell, job ids from 1).
set -euo pipefail

GE_PREFIX="${GE_PREFIX:-/opt/modak-gridengine}"
GE_ROOT="${GE_ROOT:-/var/lib/modak-gridengine}"
GE_SPOOL="${GE_SPOOL:-/var/spool/modak-gridengine}"
GE_SLOTS="${GE_SLOTS:-4}"
GE_CLEAN="${GE_CLEAN:-1}"
GE_QMASTER_PORT="${GE_QMASTER_PORT:-6444}"
GE_EXECD_PORT="${GE_EXECD_PORT:-6445}"
BIN="$GE_PREFIX/usr/lib/gridengine"
HOST="$(hostname)"

if [ "$(id -u)" != 0 ]; then
  echo "start-gridengine.sh: must run as root (it installs packages and starts daemons)" >&2
  exit 2
fi

# 1. packages: the libraries the daemons need are installed; Grid Engine itself is unpacked privately
export DEBIAN_FRONTEND=noninteractive
# one apt-get at a time on the machine (the suite's workers install at the same time)
APT_INSTALL="$(dirname "$0")/../../../scripts/apt-install"
"$APT_INSTALL" libjemalloc2 tcsh libmunge2 libtirpc3 libhwloc15 libdb5.3
if [ ! -x "$BIN/sge_qmaster" ]; then
  debs="$(mktemp -d)"
  "$APT_INSTALL" --download "$debs" gridengine-common gridengine-client gridengine-master gridengine-exec
  mkdir -p "$GE_PREFIX"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$GE_PREFIX"; done
  rm -rf "$debs"
fi

# Debian's binaries load their spooling libraries from /usr/lib/gridengine (a compiled-in path): point it at
# the private prefix when no Grid Engine is installed there
for dir in lib share; do
  if [ ! -e "/usr/$dir/gridengine" ]; then ln -s "$GE_PREFIX/usr/$dir/gridengine" "/usr/$dir/gridengine"; fi
done

# 2. stop what runs, then a fresh cell
export SGE_ROOT="$GE_ROOT" SGE_CELL=default SGE_QMASTER_PORT="$GE_QMASTER_PORT" SGE_EXECD_PORT="$GE_EXECD_PORT"
export PATH="$BIN:$PATH"
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"   # the spooling libraries the daemons load
GE_SPOOL="$GE_SPOOL" bash "$(dirname "$0")/stop-gridengine.sh"
for _ in $(seq 100); do       # the ports are free again (a daemon of an earlier run would keep them)
  ss -Hltn "( sport = :$GE_QMASTER_PORT or sport = :$GE_EXECD_PORT )" | grep -q . || break
  sleep 0.2
done
if [ "$GE_CLEAN" = 1 ]; then rm -rf "$GE_ROOT" "$GE_SPOOL"; fi
mkdir -p "$GE_ROOT/default/common" "$GE_SPOOL/qmaster" "$GE_SPOOL/execd" "$GE_ROOT/utilbin"
ln -sfn "$GE_PREFIX/usr/share/gridengine/util" "$GE_ROOT/util"
ln -sfn "$BIN" "$GE_ROOT/utilbin/$("$GE_PREFIX/usr/share/gridengine/util/arch" 2>/dev/null || echo lx-amd64)"
COMMON="$GE_ROOT/default/common"
RES="$GE_PREFIX/usr/share/gridengine/util/resources"

cat >"$COMMON/bootstrap" <<CONF
admin_user              none
default_domain          none
ignore_fqdn             true
spooling_method         classic
spooling_lib            libspoolc
spooling_params         $COMMON;$GE_SPOOL/qmaster
binary_path             $BIN
qmaster_spool_dir       $GE_SPOOL/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
CONF
echo "$HOST" >"$COMMON/act_qmaster"
echo modak >"$COMMON/cluster_name"
# every name 127.0.0.1 reads back as is this host
aliases="$(getent hosts 127.0.0.1 | awk '{for (i = 2; i <= NF; i++) print $i}'; echo localhost)"
printf '%s %s\n' "$HOST" "$(printf '%s\n' "$aliases" | grep -vx "$HOST" | sort -u | tr '\n' ' ')" >"$COMMON/host_aliases"

if [ ! -e "$GE_SPOOL/qmaster/.initialised" ]; then
  sed -e "s|^execd_spool_dir .*|execd_spool_dir        $GE_SPOOL/execd|" \
      -e "s|^min_uid .*|min_uid                0|" -e "s|^min_gid .*|min_gid                0|" \
      -e "s|^reporting_params .*|reporting_params       accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00|" \
      -e "s|^load_report_time .*|load_report_time       00:00:05|" \
      -e "s|^mailer .*|mailer                 /bin/true|" \
      "$GE_PREFIX/usr/share/gridengine/default-configuration" >"$GE_SPOOL/global.conf"
  "$BIN/spoolinit" classic libspoolc "$COMMON;$GE_SPOOL/qmaster" init
  # spooldefaults is a wrapper with Debian's paths; its binary is called directly
  "$BIN/spooldefaults.bin" configuration "$GE_SPOOL/global.conf"
  "$BIN/spooldefaults.bin" complexes "$RES/centry"
  "$BIN/spooldefaults.bin" usersets "$RES/usersets"
  "$BIN/spooldefaults.bin" managers root
  touch "$GE_SPOOL/qmaster/.initialised"
fi

cat >"$GE_ROOT/env.sh" <<ENV
export SGE_ROOT=$GE_ROOT SGE_CELL=default SGE_QMASTER_PORT=$GE_QMASTER_PORT SGE_EXECD_PORT=$GE_EXECD_PORT
export PATH=$BIN:\$PATH
ENV

# 3. the master, then the host as admin/submit/exec host with a queue and two parallel environments.
# The daemons outlive this script: they must not inherit its open files (a lock held by the caller would
# then stay held as long as they run).
for fd in "/proc/$$/fd/"*; do
  n="${fd##*/}"
  if [ "$n" -gt 2 ] && [ "$(readlink "$fd")" != "$(readlink /proc/$$/fd/255 2>/dev/null)" ]; then
    eval "exec $n>&-" 2>/dev/null || true
  fi
done
"$BIN/sge_qmaster"
for _ in $(seq 100); do qstat -g c >/dev/null 2>&1 && break; sleep 0.2; done
qconf -ah "$HOST" >/dev/null 2>&1 || true
qconf -as "$HOST" >/dev/null 2>&1 || true
qconf -ssconf | sed -e 's/^schedule_interval .*/schedule_interval                 0:0:1/' \
  -e 's/^flush_submit_sec .*/flush_submit_sec                  1/' -e 's/^flush_finish_sec .*/flush_finish_sec                  1/' \
  >"$GE_SPOOL/sched.conf"
qconf -Msconf "$GE_SPOOL/sched.conf" >/dev/null
for pe in smp mpi; do
  rule="\$pe_slots"                      # Grid Engine's own words, not shell variables
  [ "$pe" = mpi ] && rule="\$round_robin"
  cat >"$GE_SPOOL/$pe.pe" <<PE
pe_name            $pe
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $rule
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
PE
  qconf -sp "$pe" >/dev/null 2>&1 || qconf -Ap "$GE_SPOOL/$pe.pe" >/dev/null
done
"$BIN/sge_execd"
for _ in $(seq 100); do qconf -sel 2>/dev/null | grep -qx "$HOST" && break; sleep 0.2; done
qconf -sq all.q >/dev/null 2>&1 || {
  cat >"$GE_SPOOL/all.q" <<Q
qname                 all.q
hostlist              $HOST
seq_no                0
load_thresholds       NONE
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               smp mpi
rerun                 FALSE
slots                 $GE_SLOTS
tmpdir                /tmp
shell                 /bin/bash
prolog                NONE
epilog                NONE
shell_start_mode      unix_behavior
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
Q
  qconf -Aq "$GE_SPOOL/all.q" >/dev/null
}
for _ in $(seq 100); do
  qstat -f -q all.q 2>/dev/null | grep -q "all.q@$HOST" && ! qstat -f -q all.q | grep -q "all.q@$HOST.* au$" && break
  sleep 0.2
done
qstat -f
