# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lightning's own form (lightning.ai, "Run on an on-prem cluster", SLURM: ``srun python train.py`` with
``--ntasks-per-node`` equal to the Trainer's devices): one Slurm task per rank, and the program as it is.
Lightning's SLURMEnvironment reads the rank, the world and the node from Slurm's variables itself, and the
rendezvous from MASTER_ADDR and MASTER_PORT, which the batch script exports (the first node, a port from the job
id). A container gets those variables by name. Lightning ignores Slurm in a job named ``bash`` or
``interactive``: such a job name is refused where the DSL is read.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import HOST_VARS
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher

# what Lightning's SLURMEnvironment reads (lightning/fabric/plugins/environments/slurm.py)
SLURM_VARS = ("SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_NODELIST", "SLURM_NNODES", "SLURM_NTASKS",
              "SLURM_NTASKS_PER_NODE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID")


class Lightning(Launcher):
    name = "lightning"

    def training_words(self, settings, argv, wrap, scheduler):
        return scheduler.step_words(settings) + wrap(argv, host_env=HOST_VARS + SLURM_VARS)
