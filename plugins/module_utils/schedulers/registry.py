# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler registry: one backend per file, looked up by name."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.local import Local
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.pbspro import PbsPro
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.slurm import Slurm
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.torque import Torque

SCHEDULERS = {backend.name: backend for backend in (Slurm(), PbsPro(), Torque(), Local())}
ALIASES = {"pbs": "pbspro", "none": "local", "bash": "local"}


def get(name):
    """Return the backend for a scheduler name (aliases pbs, none and bash included)."""
    key = ALIASES.get(name, name)
    if key not in SCHEDULERS:
        raise KeyError("unknown scheduler %r (known: %s)" % (name, ", ".join(sorted(SCHEDULERS))))
    return SCHEDULERS[key]
