# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PBS Pro (OpenPBS) backend: #PBS directives with select/place resources."""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Scheduler, hms, opt, pbs_begin, pbs_events, pbs_job_name)


def select(options, settings, warnings):
    tpn = settings.tasks_per_node or 1
    chunk = ["%d" % settings.nodes, "ncpus=%d" % (tpn * settings.cpus_per_task), "mpiprocs=%d" % tpn]
    if settings.threads > 1:
        chunk.append("ompthreads=%d" % settings.threads)
    if settings.gpus:
        chunk.append("ngpus=%d" % settings.gpus)
    if options.mem_mb:
        chunk.append("mem=%dmb" % options.mem_mb)
    elif options.mem_per_cpu_mb:
        chunk.append("mem=%dmb" % (options.mem_per_cpu_mb * tpn * settings.cpus_per_task))
        warnings.append("PBS Pro has no per-CPU memory: asking for %d MB per node instead"
                        % (options.mem_per_cpu_mb * tpn * settings.cpus_per_task))
    return "select=" + ":".join(chunk)


def array(spec, warnings):
    match = re.match(r"^(\d+)-(\d+)(:\d+)?(%\d+)?$", spec)
    if not match:
        warnings.append("PBS Pro arrays are one range 'start-end[:step]'; job_array %s is not expressible "
                        "and was left out" % spec)
        return ""
    if match.group(4):
        warnings.append("PBS Pro has no array throttle; '%s' was dropped" % match.group(4))
    return "-J %s-%s%s" % (match.group(1), match.group(2), match.group(3) or "")


class PbsPro(Scheduler):
    name = "pbspro"
    prefix = "#PBS"
    extension = ".pbs"
    submit_dir_var = "PBS_O_WORKDIR"
    default_launcher = "mpirun"

    def directives(self, options, settings):
        warnings = []
        place = "scatter:excl" if options.exclusive else ("scatter" if settings.nodes > 1 else None)
        lines = [
            "-N %s" % pbs_job_name(options.job_name),
            "-l %s" % select(options, settings, warnings),
            opt("-l place={0}", place),
            opt("-l walltime={0}", hms(options.walltime_s) if options.walltime_s else None),
            opt("-q {0}", options.queue),
            opt("-A {0}", options.account),
            array(options.array, warnings) if options.array else "",
            opt("-W depend={0}", ",".join(options.dependency) if options.dependency else None),
            opt("-a {0}", pbs_begin(options.begin) if options.begin else None),
            opt("-m {0}", pbs_events(options.mail_events) if options.mail_events else None),
            opt("-M {0}", options.mail_user if options.mail_events else None),
            "-V" if options.export_all else "",
            opt("-v {0}", options.export_vars),
            "-o %s" % options.stdout,
            "-e %s" % options.stderr if options.stderr else "-j oe",
        ]
        lines.extend(options.extra_directives)
        for field, value in (("qos", options.qos), ("architecture_constraint", options.constraint),
                             ("request_specific_nodes", options.nodelist)):
            if value:
                warnings.append("PBS Pro has no portable directive for %s; '%s' was left out "
                                "(use extra_directives)" % (field, value))
        if options.tasks:
            warnings.append("PBS Pro counts processes per chunk: core_count %d is covered by select" % options.tasks)
        return [line for line in lines if line], warnings
