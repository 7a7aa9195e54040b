# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""torchrun, one per node (as CSC and Sigma2 write it with srun, ALCF with PBS Pro's mpiexec --ppn 1): one task
per node, started by the scheduler's step, each running torchrun with c10d rendezvous at MASTER_ADDR:MASTER_PORT;
torchrun starts the node's ranks. Where the scheduler starts no step, one node runs ``torchrun --standalone``."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import HOST_VARS, PYTHON
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw


def torchrun_words(argv, dist, scheduler=None):
    """torchrun before the program: ``python3 -m torch.distributed.run`` when the program is run by a Python (the
    same interpreter), else ``torchrun``; ``--no-python`` runs the program's words as they are."""
    runner = [argv[0], "-m", "torch.distributed.run"] if argv and PYTHON.match(str(argv[0])) else ["torchrun"]
    if dist.launch == "standalone":
        opts = ["--standalone", "--nnodes=1", "--nproc-per-node=%d" % dist.processes_per_node]
    else:
        count = scheduler.node_count_expr
        opts = [Raw("--nnodes=%s" % count) if count else "--nnodes=%d" % dist.nodes,
                "--nproc-per-node=%d" % dist.processes_per_node,
                Raw('--rdzv-id="%s"' % scheduler.job_number_expr), "--rdzv-backend=c10d",
                Raw('--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"')]
    return runner + opts + ["--no-python"] + list(argv)


class Torchrun(Launcher):
    name = "torchrun"

    def training_words(self, settings, argv, wrap, scheduler):
        dist = settings.distributed
        if dist.launch == "standalone":
            return wrap(torchrun_words(argv, dist), host_env=())
        return scheduler.step_words(settings) + wrap(torchrun_words(argv, dist, scheduler), host_env=HOST_VARS)
