# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""srun: one Slurm task per rank, for an MPI program (``--mpi=`` the library's PMI) and for a distributed
training (as NERSC, LUMI and the PyTorch Geometric guide write it): the batch script exports MASTER_ADDR and
MASTER_PORT, and a fixed ``bash -c`` wrapper sets RANK, LOCAL_RANK and WORLD_SIZE inside each task from
SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS, then runs the container (one per rank, like an MPI rank). Slurm
counts, binds and signals every rank, and the image needs no launcher of its own. The per-node launchers
(torchrun, accelerate, deepspeed) start their one task per node with the scheduler's ``step_words``.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import HOST_VARS, RANK_VARS
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher

RANK_WRAPPER = 'export RANK="$SLURM_PROCID" LOCAL_RANK="$SLURM_LOCALID" WORLD_SIZE="$SLURM_NTASKS"; exec "$@"'


class Srun(Launcher):
    name = "srun"

    def words(self, settings, scheduler=None):
        words = ["srun"]
        if settings.pmi:
            words.append("--mpi=%s" % settings.pmi)
        words.append("--ntasks=%d" % settings.ranks)
        if settings.cpus_per_task > 1:
            words.append("--cpus-per-task=%d" % settings.cpus_per_task)
        return words + list(settings.launch_options)

    def training_words(self, settings, argv, wrap, scheduler):
        return scheduler.step_words(settings) + ["bash", "-c", RANK_WRAPPER, "modak-rank"] + \
            wrap(argv, host_env=HOST_VARS + RANK_VARS)
