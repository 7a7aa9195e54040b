# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parallel launchers: one class each, registered in LAUNCHERS (the DSL's launcher enum is read from it).

A launcher turns the run settings into the words put before the program (``srun --ntasks=8``). A scheduler
backend names its default (``Scheduler.default_launcher``); the DSL may ask for another, or for none.
"""

from __future__ import annotations


class Launcher(object):
    name = ""

    def words(self, settings):
        """The words before the program for these settings."""
        raise NotImplementedError


class Srun(Launcher):
    name = "srun"

    def words(self, settings):
        words = ["srun", "--ntasks=%d" % settings.ranks]
        if settings.cpus_per_task > 1:
            words.append("--cpus-per-task=%d" % settings.cpus_per_task)
        return words


class Mpirun(Launcher):
    name = "mpirun"

    def words(self, settings):
        return ["mpirun", "-np", str(settings.ranks)]


class Mpiexec(Launcher):
    name = "mpiexec"

    def words(self, settings):
        return ["mpiexec", "-n", str(settings.ranks)]


# the registration; 'auto' (the scheduler's default) and 'none' (no launcher) are the DSL's other words
LAUNCHERS = dict((launcher.name, launcher) for launcher in (Srun(), Mpirun(), Mpiexec()))
NAMES = ("auto",) + tuple(LAUNCHERS) + ("none",)


def words(settings):
    """The launcher words for ``settings.launcher``; none for 'none'."""
    launcher = LAUNCHERS.get(settings.launcher)
    return launcher.words(settings) if launcher else []
