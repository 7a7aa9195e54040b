# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPI libraries: the process-management interface (PMI) each speaks when ``srun`` starts its ranks, and the
form of the host list its ``mpirun``/``mpiexec`` reads. One entry per library in LIBRARIES (the DSL's library
enums are read from it).

Under ``srun`` the ranks find each other through the PMI that Slurm's ``--mpi=`` plugin serves: Open MPI (and
HPC-X, which is Open MPI) needs PMIx; MPICH, MVAPICH2 and Intel MPI speak PMI-2. Slurm's ``MpiDefault`` is
``none`` unless the site set it, so a line without ``--mpi=`` starts Open MPI ranks that abort in ``MPI_Init``
and MPICH ranks that each run alone as rank 0 of 1.
"""

from __future__ import annotations

from collections import namedtuple

# pmi: srun's --mpi= plugin for the library (None: the site's MpiDefault decides); hosts: the form of the
# host file its mpirun/mpiexec reads ("openmpi": --hostfile, 'host slots=N'; "hydra": -f, 'host:N')
Library = namedtuple("Library", "name title pmi hosts note")

LIBRARIES = dict((lib.name, lib) for lib in (
    Library("openmpi", "Open MPI", "pmix", "openmpi", None),
    Library("mpich", "MPICH", "pmi2", "hydra", None),
    Library("mvapich2", "MVAPICH2", "pmi2", "hydra",
            "MVAPICH2 speaks PMI-2 under srun when it was built with --with-pmi=pmi2 --with-pm=slurm"),
    Library("intel-mpi", "Intel MPI", "pmi2", "hydra",
            "Intel MPI under srun needs I_MPI_PMI_LIBRARY set to the site's Slurm libpmi2.so "
            "(target.setup or application.environment)"),
    Library("hpcx", "HPC-X (Open MPI)", "pmix", "openmpi", None),
    Library("cray-mpich", "Cray MPICH", None, None,
            "Cray MPICH starts through the site's own PMI (MpiDefault, cray_shasta on HPE Cray EX)"),
))
NAMES = ("openmpi", "mpich", "mvapich2", "intel-mpi", "hpcx", "cray-mpich")
# Slurm's MPI plugins (srun --mpi=, MpiDefault); 'none' in the DSL: write no --mpi=, the site's MpiDefault decides
PMI_TYPES = ("pmix", "pmix_v3", "pmix_v4", "pmix_v5", "pmi2", "cray_shasta", "none")

# the host-file flag and the awk program turning Grid Engine's $PE_HOSTFILE ('host slots queue range') into
# the library's form; an unknown library gets -machinefile (both families read it) and one line per slot
HOST_FLAGS = {"openmpi": "--hostfile", "hydra": "-f", None: "-machinefile"}
PE_HOSTS_AWK = {"openmpi": '{print $1" slots="$2}', "hydra": '{print $1":"$2}',
                None: "{for (i = 0; i < $2; i++) print $1}"}


def get(name):
    """The Library for a name, or None."""
    return LIBRARIES.get(name) if name else None


def pmi_for(library, site, image_pmi=None):
    """(srun's --mpi= value or None, why) for an MPI library and the target's ``mpi_type`` setting.

    ``site``: target.mpi_type (None: not set; 'none': the site's MpiDefault); ``image_pmi``: the PMI the
    image's label says its MPI speaks, which wins over the library's usual one.
    """
    lib = get(library)
    if site == "none":
        return None, "target.mpi_type none: srun names no PMI, the site's MpiDefault decides"
    if site:
        usual = image_pmi or (lib.pmi if lib else None)
        clash = (" (%s usually needs %s)" % (lib.title, usual)
                 if lib and usual and not site.startswith(usual) else "")
        return site, "srun --mpi=%s: the site's setting (target.mpi_type)%s" % (site, clash)
    if lib is None:
        return None, None
    pmi = image_pmi or lib.pmi
    if pmi is None:
        return None, lib.note
    spoken = "PMIx" if pmi.startswith("pmix") else "PMI-2" if pmi == "pmi2" else pmi
    why = "srun --mpi=%s: %s starts its ranks through %s" % (pmi, lib.title, spoken)
    if image_pmi:
        why += " (the image's label)"
    return pmi, why + ("; " + lib.note if lib.note else "")
