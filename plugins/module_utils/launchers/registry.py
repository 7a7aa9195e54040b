# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The launcher registry: the one list of launchers (``application.launcher``), each a descriptor, and each
launcher's file loaded on first use.

A launcher is one module, ``launchers/<name>.py``, holding one class: the words it puts before the program of an
MPI job (``words``, ``lines``) and, where it starts a distributed training's ranks, the launch line of that
training (``training_words``). The descriptor says which jobs it starts (``MPI``, ``TRAINING``), whether it is
one process per node that starts the node's ranks itself (``per_node``). What a launch needs of the scheduler is
one of the scheduler's capabilities, checked by path where the DSL is read (distributed.problems: a training on
several nodes needs srun's steps). The DSL's enum and its rules read the
descriptors without importing a launcher; the imports are written out so that Ansible packs every launcher with a
module that uses them. ``app_type-ai_training.config.distributed_launch`` is the old name of the field
(compat.py reads it as ``application.launcher``).
"""

from __future__ import annotations

from collections import namedtuple

# pylint: disable=import-outside-toplevel

MPI = "mpi"              # starts an MPI program's ranks
TRAINING = "training"    # starts a distributed training's ranks (PyTorch's rendezvous variables)

Descriptor = namedtuple("Descriptor", "name title jobs per_node")
Descriptor.__doc__ = "A launcher as the DSL knows it: its name, its title, the jobs it starts, and how."

LAUNCHERS = (
    Descriptor("srun", "srun, one task per rank", frozenset((MPI, TRAINING)), False),
    Descriptor("mpirun", "mpirun over the scheduler's host file", frozenset((MPI,)), False),
    Descriptor("mpiexec", "mpiexec over the scheduler's host file", frozenset((MPI,)), False),
    Descriptor("torchrun", "torchrun, one per node", frozenset((TRAINING,)), True),
    Descriptor("accelerate", "accelerate launch, one per node", frozenset((TRAINING,)), True),
    Descriptor("lightning", "srun, one task per rank, read by Lightning", frozenset((TRAINING,)), False),
    Descriptor("deepspeed", "deepspeed --no_ssh, one per node", frozenset((TRAINING,)), True),
)
BY_NAME = dict((d.name, d) for d in LAUNCHERS)
# 'auto' (the scheduler's default, or the training's) and 'none' (the program starts its processes) are the DSL's
# other words
NAMES = ("auto",) + tuple(BY_NAME) + ("none",)
TRAINING_NAMES = tuple(d.name for d in LAUNCHERS if TRAINING in d.jobs)
PER_NODE = tuple(d.name for d in LAUNCHERS if d.per_node)
PER_RANK = tuple(d.name for d in LAUNCHERS if TRAINING in d.jobs and not d.per_node)   # one srun task per rank
# the launchers that start every rank with their own Python (``python -u`` and the script: base.python_launch), so
# that no flag of the program's Python reaches a rank (distributed.interpreter_problems)
OWN_PYTHON = ("accelerate", "deepspeed")


def _srun():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.srun import Srun
    return Srun()


def _mpirun():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.mpirun import Mpirun
    return Mpirun()


def _mpiexec():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.mpiexec import Mpiexec
    return Mpiexec()


def _torchrun():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.torchrun import Torchrun
    return Torchrun()


def _accelerate():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.accelerate import Accelerate
    return Accelerate()


def _lightning():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.lightning import Lightning
    return Lightning()


def _deepspeed():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers.deepspeed import Deepspeed
    return Deepspeed()


_LOADERS = {"srun": _srun, "mpirun": _mpirun, "mpiexec": _mpiexec, "torchrun": _torchrun, "accelerate": _accelerate,
            "lightning": _lightning, "deepspeed": _deepspeed}
_LOADED = {}


def get(name):
    """The launcher called ``name`` (its file imported now when it was not yet); KeyError for an unknown one."""
    if name not in _LOADERS:
        raise KeyError("unknown launcher %r (known: %s)" % (name, ", ".join(BY_NAME)))
    if name not in _LOADED:
        _LOADED[name] = _LOADERS[name]()
    return _LOADED[name]


def starts(name, jobs):
    """Whether the launcher ``name`` starts ``jobs`` (MPI or TRAINING)."""
    return name in BY_NAME and jobs in BY_NAME[name].jobs


def words(settings, scheduler=None):
    """The launcher words of an MPI job for ``settings.launcher`` under ``scheduler``; none for 'none'."""
    return get(settings.launcher).words(settings, scheduler) if settings.launcher in BY_NAME else []


def lines(settings, scheduler=None):
    """The shell lines the launcher needs before the run line."""
    return get(settings.launcher).lines(settings, scheduler) if settings.launcher in BY_NAME else []
