# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mpiexec: the MPI library's launcher over the scheduler's host file (``-n`` ranks)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.launchers.hostlist import HostListLauncher


class Mpiexec(HostListLauncher):
    name = "mpiexec"
    count_flag = "-n"
