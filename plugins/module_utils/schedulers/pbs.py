# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What PBS Pro and Torque share: the #PBS prefix and the directives both spell the same way."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Scheduler, opt, pbs_begin, pbs_events, pbs_job_name)


class PbsFamily(Scheduler):
    """Base of the PBS dialects; subclasses add their resource and array lines."""

    prefix = "#PBS"
    extension = ".pbs"
    submit_dir_var = "PBS_O_WORKDIR"
    default_launcher = "mpirun"

    @staticmethod
    def name_line(options):
        return "-N %s" % pbs_job_name(options.job_name)

    @staticmethod
    def common_lines(options):
        """Queue, account, dependency, start time, mail, environment and output: the same in both."""
        return [
            opt("-q {0}", options.queue),
            opt("-A {0}", options.account),
            opt("-W depend={0}", ",".join(options.dependency) if options.dependency else None),
            opt("-a {0}", pbs_begin(options.begin) if options.begin else None),
            opt("-m {0}", pbs_events(options.mail_events) if options.mail_events else None),
            opt("-M {0}", options.mail_user if options.mail_events else None),
            "-V" if options.export_all else "",
            opt("-v {0}", options.export_vars),
            opt("-o {0}", options.stdout),  # none named: PBS's <name>.o<id> (one per array index)
            "-e %s" % options.stderr if options.stderr else "-j oe",
        ]
