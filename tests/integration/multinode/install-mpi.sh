#!/usr/bin/env bash
# Install what the MPI tests build and run with, when missing (Debian 12, root): Open MPI and MPICH with their
# compiler wrappers (mpicc.openmpi, mpicc.mpich), the C compiler they call (their -dev packages do not pull
# one in without recommends) and PMIx, whose Slurm plugin needs libpmix2 before slurmd starts.
set -euo pipefail
PACKAGES="libpmix2 openmpi-bin libopenmpi-dev mpich libmpich-dev gcc libc6-dev"
missing=""
for pkg in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-mpi.sh: missing$missing; installing needs root and apt-get" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
