# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Torque backend: #PBS directives with nodes=N:ppn=P resources."""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import hms, opt, task_chunks
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.pbs import (
    COMMON_OPTIONS, PbsFamily, PbsSubmitter)


def nodes(options, settings, warnings):
    """nodes=N:ppn=P; core_count spread unevenly over the nodes gives two node kinds joined by '+'."""
    props = ""
    if settings.gpus:
        props += ":gpus=%d" % settings.gpus
    if options.constraint:
        if re.match(r"^[A-Za-z0-9_.-]+\Z", options.constraint):
            props += ":%s" % options.constraint
        else:
            warnings.append("Torque node properties are plain words; constraint '%s' was left out"
                            % options.constraint)
    return "nodes=" + "+".join("%d:ppn=%d%s" % (count, tpn * settings.cpus_per_task, props)
                               for count, tpn in task_chunks(options, settings, warnings))


class Torque(PbsFamily):
    name = "torque"

    def directives(self, options, settings):
        warnings = []
        lines = [
            self.name_line(options),
            "-l %s" % nodes(options, settings, warnings),
            opt("-l walltime={0}", hms(options.walltime_s) if options.walltime_s else None),
            opt("-l mem={0}mb", options.mem_mb),
            opt("-l pmem={0}mb", options.mem_per_cpu_mb),
            opt("-l qos={0}", options.qos),
            opt("-t {0}", options.array),
            "-n" if options.exclusive else "",
        ] + self.common_lines(options)
        lines.extend(options.extra_directives)
        if options.nodelist:
            warnings.append("Torque takes host lists as nodes=host1+host2; request_specific_nodes '%s' was left out "
                            "(use extra_directives)" % options.nodelist)
        return [line for line in lines if line], warnings


# -- submission: qsub, qstat -f, qdel -------------------------------------------------------------------------------
# raw options: the common ones, -f (fault tolerant), -L (NUMA resources) and -W umask|block
ALLOWED_OPTIONS = dict(COMMON_OPTIONS, **{"-f": None, "-L": None, "-W": ("umask", "block")})


class TorqueSubmitter(PbsSubmitter):
    """Any #PBS script that PBS Pro does not claim (no select=) is Torque's."""

    name = "torque"
    writer = Torque
    allowed_options = ALLOWED_OPTIONS
