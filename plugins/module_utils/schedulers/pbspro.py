# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PBS Pro (OpenPBS) backend: #PBS directives with select/place resources."""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import hms, opt, task_chunks
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.pbs import (
    COMMON_OPTIONS, PbsFamily, PbsSubmitter)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import directive_words


def select(options, settings, warnings):
    """select=N:ncpus=..:mpiprocs=..; core_count spread unevenly over the nodes gives two chunk kinds joined by '+'."""
    cpt = settings.cpus_per_task
    chunks = []
    for count, tpn in task_chunks(options, settings, warnings):
        chunk = ["%d" % count, "ncpus=%d" % (tpn * cpt), "mpiprocs=%d" % tpn]
        if settings.threads > 1:
            chunk.append("ompthreads=%d" % settings.threads)
        if settings.gpus:
            chunk.append("ngpus=%d" % settings.gpus)
        if options.mem_mb:
            chunk.append("mem=%dmb" % options.mem_mb)
        elif options.mem_per_cpu_mb:
            chunk.append("mem=%dmb" % (options.mem_per_cpu_mb * tpn * cpt))
        chunks.append(":".join(chunk))
    if options.mem_per_cpu_mb and not options.mem_mb:
        warnings.append("PBS Pro has no per-CPU memory: asking for %d MB per CPU times the CPUs of each chunk instead"
                        % options.mem_per_cpu_mb)
    return "select=" + "+".join(chunks)


def array(spec, warnings):
    match = re.match(r"^(\d+)-(\d+)(:\d+)?(%\d+)?\Z", spec)
    if not match:
        warnings.append("PBS Pro arrays are one range 'start-end[:step]'; job_array %s is not expressible "
                        "and was left out" % spec)
        return ""
    if match.group(4):
        warnings.append("PBS Pro has no array throttle; '%s' was dropped" % match.group(4))
    return "-J %s-%s%s" % (match.group(1), match.group(2), match.group(3) or "")


class PbsPro(PbsFamily):
    name = "pbspro"

    def directives(self, options, settings):
        warnings = []
        place = "scatter:excl" if options.exclusive else ("scatter" if settings.nodes > 1 else None)
        lines = [
            self.name_line(options),
            "-l %s" % select(options, settings, warnings),
            opt("-l place={0}", place),
            opt("-l walltime={0}", hms(options.walltime_s) if options.walltime_s else None),
            array(options.array, warnings) if options.array else "",
        ] + self.common_lines(options)
        lines.extend(options.extra_directives)
        for field, value in (("qos", options.qos), ("architecture_constraint", options.constraint),
                             ("request_specific_nodes", options.nodelist)):
            if value:
                warnings.append("PBS Pro has no portable directive for %s; '%s' was left out "
                                "(use extra_directives)" % (field, value))
        return [line for line in lines if line], warnings


# -- submission: qsub, qstat -x -f (finished jobs too), qdel --------------------------------------------------------
# raw options: the common ones, -P project and -W with attributes that name no file (not stagein, stageout, depend)
ALLOWED_OPTIONS = dict(COMMON_OPTIONS, **{"-P": None, "-W": ("umask", "sandbox", "block", "run_count",
                                                             "max_run_subjobs")})


def status_argv(job_id):
    return ["qstat", "-x", "-f", str(job_id)]   # -x: finished jobs too


class PbsProSubmitter(PbsSubmitter):
    name = "pbspro"
    aliases = ("pbs",)
    writer = PbsPro
    status_argv = staticmethod(status_argv)
    allowed_options = ALLOWED_OPTIONS

    @classmethod
    def claims(cls, text):
        """#PBS directives with a select= resource are PBS Pro's."""
        return any("select=" in word for word in directive_words(text, cls.prefix))
