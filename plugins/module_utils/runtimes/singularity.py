# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SingularityCE: the same command lines as Apptainer under another binary name."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer


class Singularity(Apptainer):
    name = "singularity"
    binary = "singularity"
    image_dir_vars = ("MODAK_IMAGE_DIR", "SINGULARITY_DIR")
