# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every launcher is: a class with the words before an MPI program, and the launch line of a training."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.distributed import PYTHON, UNBUFFERED


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

    def training_words(self, settings, argv, wrap, scheduler):
        """The launch line of a distributed training (``settings.distributed``): ``wrap(argv, host_env)`` puts the
        program into the container, passing ``host_env`` (variable names set on the host) through; across nodes,
        ``scheduler.step_words(settings)`` starts the tasks."""
        raise NotImplementedError

    def node_lines(self, dist, scheduler):
        """Lines a launch across the scheduler's tasks needs after the rendezvous (a host file)."""
        del dist, scheduler
        return []

    def single_node_lines(self, dist, scheduler):
        """Lines a launch on one node (no scheduler's tasks) needs first: none, or the port it listens on."""
        del dist, scheduler
        return []


def python_launch(argv, module, command, no_python):
    """(launcher words, program words) of a launcher that starts a Python program itself: ``<python> -m module``
    when a Python runs the program (the same interpreter; its script, or ``--module`` for a ``-m`` module, follows;
    ``-u`` is left to the launcher, which starts every rank with it; the DSL refuses the Python's other flags),
    else ``command`` with ``no_python`` before the program's words."""
    argv = list(argv)
    if argv and PYTHON.match(str(argv[0])):
        program = argv[1:]
        while program[:1] == [UNBUFFERED]:
            program = program[1:]
        if program[:1] == ["-m"]:
            program = ["--module"] + program[1:]
        return [argv[0], "-m", module], program
    return list(command), [no_python] + argv


def node_wrapper(flag, scheduler):
    """A fixed ``bash -c`` text each node's task runs: it inserts ``flag=<the node's index>`` (the scheduler's
    variable, read in the task) after the first n words (the container and the launcher), before the program."""
    return 'n=$1; shift; exec "${@:1:n}" %s="$%s" "${@:n+1}"' % (flag, scheduler.node_rank_var)
