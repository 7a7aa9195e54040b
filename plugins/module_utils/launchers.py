# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parallel launchers: one class each, registered in LAUNCHERS (the DSL's launcher enum is read from it).

A launcher turns the run settings into the words put before the program (``srun --mpi=pmix --ntasks=8``). A
scheduler backend names its default (``Scheduler.default_launcher``); the DSL may ask for another, or for none.
``srun`` names the PMI of the MPI library (``settings.pmi``); ``mpirun``/``mpiexec`` read the job's hosts from
the file the scheduler writes (``Scheduler.host_file``), in the form of the MPI library (mpi.py).
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import mpi
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

HOST_FILE = Raw('"$MODAK_HOSTFILE"')


class Launcher(object):
    name = ""

    def words(self, settings, scheduler=None):
        """The words before the program for these settings under ``scheduler`` (a backend, or None)."""
        raise NotImplementedError

    def lines(self, settings, scheduler=None):
        """Shell lines the launch needs first (a host file converted from the scheduler's)."""
        del settings, scheduler
        return []


class Srun(Launcher):
    name = "srun"

    def words(self, settings, scheduler=None):
        words = ["srun"]
        if settings.pmi:
            words.append("--mpi=%s" % settings.pmi)
        words.append("--ntasks=%d" % settings.ranks)
        if settings.cpus_per_task > 1:
            words.append("--cpus-per-task=%d" % settings.cpus_per_task)
        return words + list(settings.launch_options)


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


class Mpirun(HostListLauncher):
    name = "mpirun"
    count_flag = "-np"


class Mpiexec(HostListLauncher):
    name = "mpiexec"
    count_flag = "-n"


# the registration; 'auto' (the scheduler's default) and 'none' (no launcher) are the DSL's other words
LAUNCHERS = dict((launcher.name, launcher) for launcher in (Srun(), Mpirun(), Mpiexec()))
NAMES = ("auto",) + tuple(LAUNCHERS) + ("none",)


def words(settings, scheduler=None):
    """The launcher words for ``settings.launcher`` under ``scheduler``; none for 'none'."""
    launcher = LAUNCHERS.get(settings.launcher)
    return launcher.words(settings, scheduler) if launcher else []


def lines(settings, scheduler=None):
    """The shell lines the launcher needs before the run line."""
    launcher = LAUNCHERS.get(settings.launcher)
    return launcher.lines(settings, scheduler) if launcher else []
