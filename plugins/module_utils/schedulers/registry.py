# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler registry: the one list of schedulers, their names and aliases.

Each scheduler is one module, ``schedulers/<name>.py``, with its directive class (the ``writer``) and its
``Submitter``; registering it is one entry in BACKENDS. The DSL's schema enum, dsl.py's aliases,
batch_job's choices and the TOSCA valid_values are generated from this list (``scripts/sync_scheduler_names.py``;
tests/unit/test_scheduler_registry.py fails when one of them is out of date).
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import gridengine, local, pbspro, slurm, torque
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import (
    Submitter, directive_words)

# the registration, in the order scripts are recognised (a backend that claims every script would go last)
BACKENDS = (slurm.SlurmSubmitter, pbspro.PbsProSubmitter, torque.TorqueSubmitter, local.LocalSubmitter,
            gridengine.GridEngineSubmitter)

NAMES = tuple(backend.name for backend in BACKENDS)
ALIASES = dict((alias, backend.name) for backend in BACKENDS for alias in backend.aliases)
# every word the DSL accepts for job_scheduler_type: each name followed by its aliases
ALL_NAMES = tuple(word for backend in BACKENDS for word in (backend.name,) + tuple(backend.aliases))
SUBMITTERS = dict((backend.name, backend) for backend in BACKENDS)
SCHEDULERS = dict((backend.name, backend.writer()) for backend in BACKENDS)
FALLBACK = [backend.name for backend in BACKENDS if backend.fallback][0]

__all__ = ("ALIASES", "ALL_NAMES", "BACKENDS", "NAMES", "SCHEDULERS", "Submitter", "canonical", "describe",
           "detect", "directive_words", "get", "submitter")


def canonical(name):
    """The registry's name for a name or an alias; KeyError for an unknown one."""
    key = ALIASES.get(name, name)
    if key not in SCHEDULERS:
        raise KeyError("unknown scheduler %r (known: %s)" % (name, ", ".join(sorted(SCHEDULERS))))
    return key


def get(name):
    """Return the directive backend (the writer) for a scheduler name (aliases included)."""
    return SCHEDULERS[canonical(name)]


def submitter(name):
    """Return the Submitter class for a scheduler name (aliases included)."""
    return SUBMITTERS[canonical(name)]


def detect(text):
    """The scheduler a script is written for, read from its directives; the fallback (local) when none claims it."""
    for backend in BACKENDS:
        if backend.claims(text):
            return backend.name
    return FALLBACK


def describe(with_aliases=True):
    """The names for messages and docs: 'slurm, pbspro (pbs), torque, local (none, bash)'."""
    return ", ".join("%s (%s)" % (b.name, ", ".join(b.aliases)) if with_aliases and b.aliases else b.name
                     for b in BACKENDS)
