# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every launcher is: a class with the words before an MPI program, and the launch line of a training."""

from __future__ import annotations


class Launcher(object):
    """One launcher (launchers/registry.py describes it): the words of an MPI job's launch, and, for a launcher
    that starts a distributed training's ranks, that launch's line."""

    name = ""

    def words(self, settings, scheduler=None):
        """The words before the program for these settings under ``scheduler`` (a backend, or None); a launcher
        that starts only a training's ranks has none (the DSL refuses it for an MPI program)."""
        raise NotImplementedError("%s starts a distributed training's ranks, not an MPI program's" % self.name)

    def lines(self, settings, scheduler=None):
        """Shell lines the launch needs first (a host file converted from the scheduler's)."""
        del settings, scheduler
        return []

    def training_words(self, settings, argv, wrap):
        """The launch line of a distributed training (``settings.distributed``): ``wrap(argv, host_env)`` puts the
        program into the container, passing ``host_env`` (variable names set on the host) through."""
        raise NotImplementedError
