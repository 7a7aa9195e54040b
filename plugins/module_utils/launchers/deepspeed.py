# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeepSpeed's launcher (``deepspeed``, deepspeed/launcher/runner.py), one per node without ssh: the scheduler's
step starts one task per node, each running ``deepspeed --no_ssh --node_rank=<its node>`` over a host file written
from the allocation (each node with ``slots=`` its ranks) and the rendezvous at MASTER_ADDR:MASTER_PORT; each
node's launcher starts its ranks with RANK, LOCAL_RANK, WORLD_SIZE and ``--local_rank``. On one node where the
scheduler starts no step, ``deepspeed --num_gpus=<ranks>`` on a port from the job's number.

DeepSpeed's other Slurm form, ``--launcher slurm``, runs one srun of every rank and leaves the ranks to find each
other through mpi4py (deepspeed.comm's MPI discovery, always on port 29500): modak writes the form that needs
neither ssh nor mpi4py, and starts exactly the processes the directives allocate.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import HOST_VARS, port_lines
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher, node_wrapper, python_launch
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import trust
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw, exit_trap_lines

# the host file, in the job's working directory (every node reads it): one line per node, "<host> slots=<ranks>";
# a fresh file that mktemp makes (O_EXCL, 0600: a name planted there, a link among them, is never written through),
# its path in HOST_FILE_VAR; the script removes it when it exits
HOST_FILE_TEMPLATE = "deepspeed-hosts.XXXXXX"
HOST_FILE_VAR = "MODAK_DEEPSPEED_HOSTS"
HOST_FILE = '"$%s"' % HOST_FILE_VAR


def deepspeed_words(argv, dist, scheduler):
    """(launcher words, program words): ``python3 -m deepspeed.launcher.runner`` when a Python runs the program (the
    same interpreter starts the ranks: ``-u`` and the script), else ``deepspeed --no_python``."""
    runner, program = python_launch(argv, "deepspeed.launcher.runner", ["deepspeed"], "--no_python")
    if dist.stepped:
        opts = ["--no_ssh", Raw('--hostfile=%s' % HOST_FILE), Raw('--master_addr="$MASTER_ADDR"'),
                Raw('--master_port="$MASTER_PORT"')]
    else:
        opts = ["--num_gpus=%d" % dist.processes_per_node, Raw('--master_port="$MASTER_PORT"')]
    return runner + opts, program


class Deepspeed(Launcher):
    name = "deepspeed"

    def training_words(self, settings, argv, wrap, scheduler):
        dist = settings.distributed
        launcher, program = deepspeed_words(argv, dist, scheduler)
        inner = wrap(launcher + program, host_env=HOST_VARS if dist.stepped else ("MASTER_PORT",))
        if not dist.stepped:
            return inner
        # --node_rank: each node's index, read in the node's task
        return scheduler.step_words(settings) + ["bash", "-c", node_wrapper("--node_rank", scheduler), "modak-node",
                                                 str(len(inner) - len(program))] + inner

    def single_node_lines(self, dist, scheduler):
        return ["# distributed training: deepspeed's rendezvous port on this node"] + port_lines(scheduler)

    def node_lines(self, dist, scheduler):
        """The host file of the allocation: each node once, in the scheduler's order, with its ranks as slots, in a
        file made anew (``mktemp``) in the working directory, once the job has checked that others may rename
        nothing there (``trust.workdir_lines``); removed when the script exits (the trap is set as soon
        as the file exists: no file is left behind whatever fails after it)."""
        made = '%s="$(mktemp "$MODAK_WORKDIR/%s")"' % (HOST_FILE_VAR, HOST_FILE_TEMPLATE)
        line = "%s | sed 's/$/ slots=%d/' > %s" % (scheduler.hosts_command, dist.processes_per_node, HOST_FILE)
        return (trust.workdir_lines("the DeepSpeed host file") + [made]
                + exit_trap_lines("rm -f %s" % HOST_FILE, "MODAK_HOSTS_EXIT_TRAP") + [line])
