# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mpirun and mpiexec's shared part: the job's hosts read from the file the scheduler writes
(``Scheduler.host_file``), in the form of the MPI library (mpi.py)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import mpi
from ansible_collections.sodalite.modak.plugins.module_utils.launchers.base import Launcher
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

HOST_FILE = Raw('"$MODAK_HOSTFILE"')


class HostListLauncher(Launcher):
    """mpirun and mpiexec: the scheduler's host list, in the form of the library's launcher."""

    count_flag = ""

    def host_words(self, settings, scheduler):
        host_file = getattr(scheduler, "host_file", None)
        if not host_file:
            return []
        lib = mpi.get(settings.mpi_library)
        flag = mpi.HOST_FLAGS[lib.hosts if lib else None]
        if getattr(scheduler, "host_file_form", "slots") == "slots":
            return [flag, Raw('"$%s"' % host_file)]
        return [flag, HOST_FILE]

    def lines(self, settings, scheduler=None):
        host_file = getattr(scheduler, "host_file", None)
        if not host_file or getattr(scheduler, "host_file_form", "slots") == "slots":
            return []
        lib = mpi.get(settings.mpi_library)
        awk = mpi.PE_HOSTS_AWK[lib.hosts if lib else None]
        return ['MODAK_HOSTFILE="$(mktemp)"',
                "awk '%s' \"$%s\" > \"$MODAK_HOSTFILE\"" % (awk, host_file)]

    def words(self, settings, scheduler=None):
        return [self.name] + self.host_words(settings, scheduler) + [self.count_flag, str(settings.ranks)]
