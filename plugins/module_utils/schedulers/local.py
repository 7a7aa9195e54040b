# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local backend: a plain bash script that redirects its own output and enforces the wall time."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler


def _target(name):
    """A redirection target; a name starting with a digit gets './' so that it cannot read as a descriptor."""
    return shell.quote("./" + name if name[:1].isdigit() else name)


class Local(Scheduler):
    name = "local"
    prefix = "#"
    extension = ".sh"
    default_launcher = "mpirun"

    def directives(self, options, settings):
        warnings = []
        ignored = [name for name, value in (
            ("queue", options.queue), ("account", options.account), ("qos", options.qos),
            ("job_array", options.array), ("job_dependency", options.dependency),
            ("memory_limit", options.mem_mb), ("request_event_notification", options.mail_events),
            ("extra_directives", options.extra_directives)) if value]
        if settings.nodes > 1:
            ignored.append("node_count")
        if ignored:
            warnings.append("a local run has no scheduler: %s ignored" % ", ".join(ignored))
        return [], warnings

    def preamble(self, options, settings):
        _lines, warnings = self.directives(options, settings)
        return ["# modak: local run of job %s" % options.job_name], warnings

    def run_prefix(self, options):
        if options.walltime_s:
            return ["timeout", "--signal=TERM", "--kill-after=30", "%ds" % options.walltime_s]
        return []

    def redirect_lines(self, options):
        if not options.stdout:
            # no file named: the output stays with whoever runs the script (batch_job writes <name>.o<pid>,
            # unique per run); standard error joins it unless a file is named for it
            return ["exec 2>%s" % _target(options.stderr) if options.stderr else "exec 2>&1"]
        if options.stderr:
            return ["exec >%s 2>%s" % (_target(options.stdout), _target(options.stderr))]
        return ["exec >%s 2>&1" % _target(options.stdout)]
