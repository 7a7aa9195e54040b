# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container runtime registry."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.charliecloud import Charliecloud
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.podman import Podman
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.singularity import Singularity

RUNTIMES = {runtime.name: runtime for runtime in (Apptainer(), Singularity(), Charliecloud(), Podman())}


def get(name):
    if name not in RUNTIMES:
        raise KeyError("unknown container engine %r (known: %s)" % (name, ", ".join(sorted(RUNTIMES))))
    return RUNTIMES[name]
