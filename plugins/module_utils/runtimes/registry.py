# -*- coding: utf-8 -*-
# Copyright: modak developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The container runtime registry."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.singularity import Singularity

RUNTIMES = {runtime.name: runtime for runtime in (Apptainer(), Singularity())}


def get(name):
    if name not in RUNTIMES:
        raise KeyError("unknown container engine %r (known: %s)" % (name, ", ".join(sorted(RUNTIMES))))
    return RUNTIMES[name]
