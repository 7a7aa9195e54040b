# -*- coding: utf-8 -*-
# Copyright: modak developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""SingularityCE: the same command lines as Apptainer under another binary name."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer


class Singularity(Apptainer):
    name = "singularity"
    binary = "singularity"
    image_dir_vars = ("MODAK_IMAGE_DIR", "SINGULARITY_DIR")
