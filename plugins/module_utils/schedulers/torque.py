# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Torque backend: #PBS directives with nodes=N:ppn=P resources."""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    cannot, hms, opt, refuse, task_chunks)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.pbs import (
    COMMON_OPTIONS, COMMON_RESOURCES, PbsFamily)


def nodes(options, settings, warnings, problems):
    """nodes=N:ppn=P; core_count spread unevenly over the nodes gives two node kinds joined by '+'."""
    props = ""
    if settings.gpus:
        props += ":gpus=%d" % settings.gpus
    if options.constraint:
        if re.match(r"^[A-Za-z0-9_.-]+\Z", options.constraint):
            props += ":%s" % options.constraint
        else:
            cannot(problems, "architecture_constraint", "Torque", "a feature expression (node properties are plain "
                   "words)", options.constraint, "name one property, e.g. 'avx2'")
    chunks = task_chunks(options, settings, warnings)
    if options.nodelist:
        hosts = options.nodelist.split(",")
        if "[" in options.nodelist or len(chunks) > 1 or len(hosts) != chunks[0][0]:
            cannot(problems, "request_specific_nodes", "Torque", "this node list (one plain host name per node "
                   "asked for: nodes=host1:ppn=P+host2:ppn=P)", options.nodelist,
                   "name as many hosts as node_count, comma-separated, without ranges")
        else:
            return "nodes=" + "+".join("%s:ppn=%d%s" % (host, chunks[0][1] * settings.cpus_per_task, props)
                                       for host in hosts)
    return "nodes=" + "+".join("%d:ppn=%d%s" % (count, tpn * settings.cpus_per_task, props)
                               for count, tpn in chunks)


# -- submission: qsub, qstat -f, qdel -------------------------------------------------------------------------------
# raw options: the common ones, -f (fault tolerant), -L (NUMA resources), -W umask|block and -l with resources of
# pbs_resources(7) and Moab's -l that name no file and run nothing (not prologue, epilogue: scripts run with the job;
# not Moab's trig, stagein, stageout, template; not nodes, walltime, mem, pmem, qos: typed, and a raw one after the
# typed line would win)
RESOURCES = tuple(name for name in COMMON_RESOURCES if name != "pmem") + ("feature", "gres", "naccesspolicy", "arch", "opsys", "partition", "minwclimit")
ALLOWED_OPTIONS = dict(COMMON_OPTIONS, **{"-f": None, "-L": None, "-l": RESOURCES, "-W": ("umask", "block")})


class Torque(PbsFamily):
    """Any #PBS script that PBS Pro does not claim (no select=) is Torque's."""

    name = "torque"
    array_index_expr = "$PBS_ARRAYID"              # qsub(1), -t: PBS_ARRAYID; PBS_JOBID '1234[5].server'
    array_job_expr = "${PBS_JOBID%%\\[*}"
    allowed_options = ALLOWED_OPTIONS
    node_cpus_var = "PBS_NUM_PPN"   # Torque's qsub(1): the ppn asked for each node

    def directives(self, options, settings):
        warnings, problems = [], []
        lines = [
            self.name_line(options),
            "-l %s" % nodes(options, settings, warnings, problems),
            opt("-l walltime={0}", hms(options.walltime_s) if options.walltime_s else None),
            opt("-l mem={0}mb", options.mem_mb),
            opt("-l pmem={0}mb", options.mem_per_cpu_mb),
            opt("-l qos={0}", options.qos),
            opt("-t {0}", options.array),
            "-n" if options.exclusive else "",
        ] + self.common_lines(options)
        lines.extend(options.extra_directives)
        for field, value, what in (("gpu_type", options.gpu_type if settings.gpus else None, "a GPU model"),
                                   ("memory_per_gpu", options.mem_per_gpu_mb, "memory per GPU"),
                                   ("memory_whole_node", options.mem_whole_node, "'all the memory of the node'"),
                                   ("local_scratch", options.scratch_mb, "node-local scratch portably"),
                                   ("placement", options.placement if options.placement != "free" else None,
                                    "a placement")):
            if value:
                cannot(problems, field, "Torque", what, value, "leave it out, or use the site's resource in "
                       "extra_directives")
        refuse(problems)
        return [line for line in lines if line], warnings
