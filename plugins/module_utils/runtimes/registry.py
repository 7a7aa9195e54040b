# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container runtime registry: the runtimes' names, each runtime's file loaded on first use.

The DSL's schema reads only the names; ``get`` imports a runtime's file when a job script needs it. The imports
are written out, one loader per runtime, so that Ansible packs every runtime with a module that uses them.
"""

from __future__ import annotations

# pylint: disable=import-outside-toplevel


def _apptainer():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer
    return Apptainer()


def _singularity():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.singularity import Singularity
    return Singularity()


def _charliecloud():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.charliecloud import Charliecloud
    return Charliecloud()


def _podman():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.podman import Podman
    return Podman()


def _pyxis():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.pyxis import Pyxis
    return Pyxis()


_LOADERS = {"apptainer": _apptainer, "singularity": _singularity, "charliecloud": _charliecloud, "podman": _podman,
            "pyxis": _pyxis}
# runtimes that enter the container through srun's own options (Slurm's SPANK plugins): Slurm only
SRUN_PLUGINS = ("pyxis",)
RUNTIMES = tuple(_LOADERS)          # the names, in the order the DSL's schema lists them
_LOADED = {}


def get(name):
    """The runtime called ``name`` (its file imported now when it was not yet); KeyError for an unknown one."""
    if name not in _LOADERS:
        raise KeyError("unknown container engine %r (known: %s)" % (name, ", ".join(sorted(RUNTIMES))))
    if name not in _LOADED:
        _LOADED[name] = _LOADERS[name]()
    return _LOADED[name]
