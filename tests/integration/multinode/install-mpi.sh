#!/usr/bin/env bash
# Install what the MPI tests build and run with, when missing (Debian 12, root): Open MPI and MPICH with their
# compiler wrappers (mpicc.openmpi, mpicc.mpich), the C compiler they call (their -dev packages do not pull
# one in without recommends) and PMIx, whose Slurm plugin needs libpmix2 before slurmd starts.
set -euo pipefail
PACKAGES="libpmix2 openmpi-bin libopenmpi-dev mpich libmpich-dev gcc libc6-dev"
# one apt-get at a time on the machine (the suite's workers install at the same time)
# shellcheck disable=SC2086
exec "$(dirname "$0")/../../../scripts/apt-install" $PACKAGES
