# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler registry: the one list of schedulers, each a hand-written descriptor, and each backend loaded on
its first use.

A scheduler is one module, ``schedulers/<name>.py``, holding one class (directives, submit/status/cancel argv and
their parsers, its state map, its raw-option allow-list). Registering it is one entry in SCHEDULERS: its names and
its capabilities, which the DSL's schema and validation read without importing any backend. Code outside
``schedulers/`` asks for a capability (``capable``), never for a scheduler's name. The schema's enum, batch_job's
choices (a doc fragment) and the TOSCA data types are generated from this list by ``make schema``.
"""

from __future__ import annotations

from collections import namedtuple

# -- capabilities: what code outside schedulers/ may ask of a scheduler ------------------------------------------
# the scheduler starts the job's tasks on every node of the allocation with srun (job steps, SLURM_PROCID and
# the node list): srun-launched ranks and training across nodes need it
SRUN_STEPS = "srun_steps"
# the scheduler starts one process on each node of the allocation (Scheduler.step_words: srun on Slurm,
# mpiexec --ppn 1 on PBS Pro's PALS): a per-node launcher (torchrun, accelerate, deepspeed) across nodes needs it
NODE_STEPS = "node_steps"
# the script's directives are read by a batch system (a run without a scheduler writes none)
BATCH = "batch"
# a job can wait for another to end well (exit status 0), not only to end (Grid Engine's -hold_jid cannot say it)
AFTER_OK = "after_ok"
# one script submitted as an array of jobs, each element knowing its index (Scheduler.array_*)
ARRAYS = "arrays"
# the scheduler puts a job marked rerunnable back in the queue after a preemption or a lost node (job.resilience)
REQUEUE = "requeue"
# the scheduler signals the job a lead time before its wall time limit, and the job can requeue itself then
# (job.resilience's time_limit and total_training_time); local: the job's timeout(1) signals the program, and the
# job's script runs it again itself
LIMIT_SIGNAL = "limit_signal"
# the scheduler tells, without submitting, whether a job fits and when it would start (Scheduler.start_estimate:
# Slurm's sbatch --test-only); job.placement counts from now where a scheduler cannot tell
START_ESTIMATE = "start_estimate"

Descriptor = namedtuple("Descriptor", "name title aliases capabilities")
Descriptor.__doc__ = "A scheduler as the DSL knows it: its name, its title, the other words for it, what it can do."

# the registration, in the order scripts are recognised (a backend that claims every #PBS script, Torque, comes
# after the one that claims some, PBS Pro); the last one is the fallback: it takes the scripts nobody claims
SCHEDULERS = (
    Descriptor("slurm", "Slurm", (), frozenset((BATCH, SRUN_STEPS, NODE_STEPS, AFTER_OK, ARRAYS, REQUEUE, LIMIT_SIGNAL,
                                                START_ESTIMATE))),
    Descriptor("pbspro", "PBS Pro", ("pbs",), frozenset((BATCH, NODE_STEPS, AFTER_OK, ARRAYS, REQUEUE))),
    Descriptor("torque", "Torque", (), frozenset((BATCH, AFTER_OK, ARRAYS, REQUEUE))),
    Descriptor("gridengine", "Grid Engine", ("sge",), frozenset((BATCH, ARRAYS, REQUEUE))),
    Descriptor("flux", "Flux", (), frozenset((BATCH, AFTER_OK))),
    Descriptor("local", "bash on the host", ("none", "bash"), frozenset((LIMIT_SIGNAL,))),
)

DESCRIPTORS = {d.name: d for d in SCHEDULERS}
NAMES = tuple(d.name for d in SCHEDULERS)
ALIASES = {alias: d.name for d in SCHEDULERS for alias in d.aliases}
ALL_NAMES = tuple(word for d in SCHEDULERS for word in (d.name,) + d.aliases)   # every word the DSL accepts
FALLBACK = SCHEDULERS[-1].name
DESCRIPTION = ", ".join("%s (%s)" % (d.name, ", ".join(d.aliases)) if d.aliases else d.name for d in SCHEDULERS)


def _module(name):
    """The module of a scheduler, imported now: one import statement per backend (Ansible ships a module_utils
    file with a module only when an import statement names it)."""
    # pylint: disable=import-outside-toplevel
    if name == "slurm":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import slurm as module
    elif name == "pbspro":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import pbspro as module
    elif name == "torque":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import torque as module
    elif name == "gridengine":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import gridengine as module
    elif name == "flux":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import flux as module
    elif name == "local":
        from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import local as module
    else:
        raise KeyError("unknown scheduler %r" % (name,))
    return module


_CLASSES = {}
_INSTANCES = {}

__all__ = ("AFTER_OK", "ALIASES", "ALL_NAMES", "BATCH", "DESCRIPTION", "FALLBACK", "LIMIT_SIGNAL", "NAMES", "NODE_STEPS",
           "REQUEUE", "SCHEDULERS", "SRUN_STEPS", "START_ESTIMATE",
           "backends", "canonical", "capable", "describe", "descriptor", "detect", "get", "scheduler_class")


def canonical(name):
    """The registry's name for a name or an alias; KeyError for an unknown one."""
    key = ALIASES.get(name, name)
    if key not in DESCRIPTORS:
        raise KeyError("unknown scheduler %r (known: %s)" % (name, ", ".join(NAMES)))
    return key


def descriptor(name):
    """The descriptor of a scheduler name or alias (no backend is loaded)."""
    return DESCRIPTORS[canonical(name)]


def capable(name, capability):
    """Whether the scheduler (a name or an alias) has the capability; an unknown name has none."""
    key = ALIASES.get(name, name)
    return key in DESCRIPTORS and capability in DESCRIPTORS[key].capabilities


def scheduler_class(name):
    """The class of a scheduler name (aliases included); its module is imported now. Instantiate it with a Runner
    to submit, follow and cancel jobs."""
    key = canonical(name)
    if key not in _CLASSES:
        module = _module(key)
        found = [value for value in vars(module).values()
                 if isinstance(value, type) and getattr(value, "name", None) == key
                 and value.__module__ == module.__name__]
        if len(found) != 1:
            raise KeyError("schedulers/%s.py must hold one class named %r, found %d" % (key, key, len(found)))
        _CLASSES[key] = found[0]
    return _CLASSES[key]


def get(name):
    """The scheduler (an instance without a Runner) for its directives: what render.py and settings.py use."""
    key = canonical(name)
    if key not in _INSTANCES:
        _INSTANCES[key] = scheduler_class(key)()
    return _INSTANCES[key]


def backends():
    """Every scheduler class, in the order of recognition (loads every backend)."""
    return tuple(scheduler_class(name) for name in NAMES)


def detect(text):
    """The scheduler a script is written for, read from its directives; the fallback (local) when none claims it."""
    for backend in backends():
        if backend.claims(text):
            return backend.name
    return FALLBACK


def describe(with_aliases=True):
    """The names for messages and docs: 'slurm, pbspro (pbs), torque, local (none, bash)'."""
    return DESCRIPTION if with_aliases else ", ".join(NAMES)
