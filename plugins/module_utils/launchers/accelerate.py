# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""accelerate launch, one per node (as Hugging Face Accelerate's Slurm example writes it): one task per node
(the scheduler's step), each running ``accelerate launch --multi_gpu`` with the static rendezvous at
MASTER_ADDR:MASTER_PORT (``--multi_gpu`` picks Accelerate's torch.distributed launcher, on CPUs too, where the program gets gloo;
``--cpu`` would start one process); on one node without Slurm, c10d on a free local port."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import HOST_VARS
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher, node_wrapper, python_launch
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw


def accelerate_words(argv, dist):
    """(launcher words, program words): ``python3 -m accelerate.commands.launch`` when a Python runs the program
    (the same interpreter; its script or ``-m`` module follows), else ``accelerate launch --no_python``."""
    runner, program = python_launch(argv, "accelerate.commands.launch", ["accelerate", "launch"], "--no_python")
    opts = ["--multi_gpu", "--num_processes=%d" % dist.world_size, "--num_machines=%d" % dist.nodes]
    if dist.stepped:
        # static rendezvous (Accelerate's default): machine 0, whose port Accelerate checks, hosts the store;
        # c10d lets any node whose name resolves to itself host it, and then machine 0's check fails
        opts += ["--rdzv_backend=static", Raw('--main_process_ip="$MASTER_ADDR"'),
                 Raw('--main_process_port="$MASTER_PORT"')]
    else:   # one node: c10d on a free local port, as torchrun --standalone
        opts += ["--rdzv_backend=c10d", "--main_process_ip=localhost", "--main_process_port=0"]
    return runner + opts, program


class Accelerate(Launcher):
    name = "accelerate"

    def training_words(self, settings, argv, wrap, scheduler):
        dist = settings.distributed
        launcher, program = accelerate_words(argv, dist)
        inner = wrap(launcher + program, host_env=HOST_VARS if dist.stepped else ())
        if not dist.stepped:
            return inner
        # Accelerate needs each machine's rank, read in the node's task
        return scheduler.step_words(settings) + ["bash", "-c", node_wrapper("--machine_rank", scheduler), "modak-node",
                                                 str(len(inner) - len(program))] + inner
