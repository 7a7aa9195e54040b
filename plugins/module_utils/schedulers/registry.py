# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler registry: the one list of schedulers, and each backend loaded on its first use.

Each scheduler is one module, ``schedulers/<name>.py``, with its directive class (the ``writer``), its
``Submitter`` and the raw options it allows; registering it is one entry in MODULES. ``schedulers/table.py``
(names, aliases, allowed options) is generated from the modules (``make schema``, scripts/export_scheduler_table.py),
so that the DSL's schema and validation read them without importing any backend; the schema enum, batch_job's
choices and the TOSCA valid_values are generated from the table (tests/unit/test_scheduler_registry.py and
tests/unit/test_scheduler_options.py fail when one of them is out of date).
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import table
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.table import (
    ALIASES, ALL_NAMES, DESCRIPTION, FALLBACK, NAMES)

# the registration: backend modules in the order scripts are recognised (a backend that claims every #PBS script,
# Torque, comes after the one that claims some, PBS Pro)
MODULES = ("slurm", "pbspro", "torque", "local", "gridengine")

_WRITERS = {}

__all__ = ("ALIASES", "ALL_NAMES", "FALLBACK", "MODULES", "NAMES", "backends", "canonical", "describe", "detect",
           "get", "submitter")


def canonical(name):
    """The registry's name for a name or an alias; KeyError for an unknown one."""
    key = ALIASES.get(name, name)
    if key not in table.SUBMITTERS:
        raise KeyError("unknown scheduler %r (known: %s)" % (name, ", ".join(sorted(NAMES))))
    return key


def submitter(name):
    """Return the Submitter class for a scheduler name (aliases included); its module is imported now."""
    key = canonical(name)
    return getattr(table.load(key), table.SUBMITTERS[key])


def get(name):
    """Return the directive backend (the writer) for a scheduler name (aliases included)."""
    key = canonical(name)
    if key not in _WRITERS:
        _WRITERS[key] = submitter(key).writer()
    return _WRITERS[key]


def backends():
    """Every Submitter class, in the order of recognition (loads every backend)."""
    return tuple(submitter(name) for name in NAMES)


def detect(text):
    """The scheduler a script is written for, read from its directives; the fallback (local) when none claims it."""
    for backend in backends():
        if backend.claims(text):
            return backend.name
    return FALLBACK


def describe(with_aliases=True):
    """The names for messages and docs: 'slurm, pbspro (pbs), torque, local (none, bash)'."""
    return DESCRIPTION if with_aliases else ", ".join(NAMES)
