# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PBS Pro (OpenPBS) backend: #PBS directives with select/place resources."""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    cannot, hms, opt, refuse, task_chunks)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.pbs import (
    COMMON_OPTIONS, COMMON_RESOURCES, PbsFamily)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import directive_words

GPU_TYPE_RESOURCE = "gpu_type"    # the chunk resource for the GPU model when the site names none


def chunk_counts(options, settings, warnings, problems):
    """[(chunks, tasks per chunk)]: per node with a node count; one chunk per task without (PBS places them)."""
    if settings.nodes_fixed or options.tasks_per_node or (settings.tasks or 1) <= 1:
        return task_chunks(options, settings, warnings)
    for field, value, what in (("memory_limit", options.mem_mb, "memory per node"),
                               ("request_gpus", settings.gpus, "GPUs per node"),
                               ("memory_per_gpu", options.mem_per_gpu_mb, "memory per node's GPUs"),
                               ("local_scratch", options.scratch_mb, "scratch per node")):
        if value:
            cannot(problems, field, "PBS Pro without node_count (one chunk per task)", what, value,
                   "give node_count (and process_count_per_node) so that each chunk is a node")
    return [(settings.tasks, 1)]


def select(options, settings, warnings, problems):
    """select=N:ncpus=..:mpiprocs=..; core_count spread unevenly over the nodes gives two chunk kinds joined by '+'."""
    cpt = settings.cpus_per_task
    chunks = []
    for count, tpn in chunk_counts(options, settings, warnings, problems):
        chunk = ["%d" % count, "ncpus=%d" % (tpn * cpt), "mpiprocs=%d" % tpn]
        if settings.threads > 1:
            chunk.append("ompthreads=%d" % settings.threads)
        if settings.gpus:
            chunk.append("ngpus=%d" % settings.gpus)
            if options.gpu_type:
                chunk.append("%s=%s" % (options.gpu_type_resource or GPU_TYPE_RESOURCE, options.gpu_type))
        if options.mem_mb:
            chunk.append("mem=%dmb" % options.mem_mb)
        elif options.mem_per_cpu_mb:
            chunk.append("mem=%dmb" % (options.mem_per_cpu_mb * tpn * cpt))
        elif options.mem_per_gpu_mb and settings.gpus:
            chunk.append("mem=%dmb" % (options.mem_per_gpu_mb * settings.gpus))
        if options.scratch_mb and options.scratch_resource:
            chunk.append("%s=%dmb" % (options.scratch_resource, options.scratch_mb))
        chunks.append(":".join(chunk))
    return "select=" + "+".join(chunks)


def place(options, settings):
    """place= when asked: the placement, with ':excl' for node_exclusive; a training launched once per node
    scatters its chunks (one per node, as mpiexec --ppn 1 needs) unless the DSL places them."""
    dist = getattr(settings, "distributed", None)
    placement = options.placement or ("scatter" if dist and dist.stepped else None)
    words = [w for w in (placement, "excl" if options.exclusive else None) if w]
    return "-l place=%s" % ":".join(words) if words else ""


def array(spec, problems):
    match = re.match(r"^(\d+)-(\d+)(:\d+)?(%\d+)?\Z", spec)
    if not match:
        cannot(problems, "job_array", "PBS Pro", "this array (one range 'start-end[:step]' only)", spec,
               "write one range, e.g. 0-9 or 0-99:2")
        return ""
    if match.group(4):
        cannot(problems, "job_array", "PBS Pro", "an array throttle ('%s')" % match.group(4), spec,
               "leave the '%N' throttle out")
    return "-J %s-%s%s" % (match.group(1), match.group(2), match.group(3) or "")


# -- submission: qsub, qstat -x -f (finished jobs too), qdel --------------------------------------------------------
# raw options: the common ones, -P project, -W with attributes that name no file (not stagein, stageout, depend)
# and -l with job-wide resources (pbs_resources(7B); not select, walltime: typed; not aoe, eoe: they provision the
# nodes)
RESOURCES = COMMON_RESOURCES + ("place", "site", "preempt_targets", "min_walltime", "max_walltime", "soft_walltime")
ALLOWED_OPTIONS = dict(COMMON_OPTIONS, **{"-P": None, "-l": RESOURCES,
                                          "-W": ("umask", "sandbox", "block", "run_count", "max_run_subjobs")})


def status_argv(job_id):
    return ["qstat", "-x", "-f", str(job_id)]   # -x: finished jobs too


class PbsPro(PbsFamily):
    name = "pbspro"
    array_min_size = 2                              # qsub(1B), -J X-Y: Y greater than X
    array_index_expr = "$PBS_ARRAY_INDEX"          # qsub(1B), -J: PBS_ARRAY_INDEX, PBS_ARRAY_ID '1234[].server'
    array_job_expr = "${PBS_ARRAY_ID%%\\[*}"
    status_argv = staticmethod(status_argv)
    allowed_options = ALLOWED_OPTIONS
    node_cpus_var = "NCPUS"      # PBS Pro sets it to the ncpus of the job's first chunk (pbs_environment)
    # the rendezvous: the first node of $PBS_NODEFILE is the mother superior, where the script runs; the job's
    # number is PBS_JOBID up to its server ('1234.server'), plus an array element's index ('1234[5].server'), so
    # that the elements of one array take ports and host files of their own
    first_node_expr = '$(head -n 1 "$PBS_NODEFILE")'
    job_number_expr = "$(( ${PBS_JOBID%%[.[]*} + ${PBS_ARRAY_INDEX:-0} ))"
    hosts_command = "awk '!seen[$0]++' \"$PBS_NODEFILE\""
    node_rank_var = "PMI_RANK"    # a process's rank in mpiexec's job: with --ppn 1, its node's index

    @classmethod
    def step_words(cls, settings):
        """mpiexec as PBS Pro's PALS systems write it (ALCF Polaris: -n, --ppn, --depth with --cpu-bind depth):
        the tasks the select statement allocates, each bound to its CPUs."""
        words = ["mpiexec", "-n", str(settings.ranks), "--ppn", str(settings.tasks_per_node)]
        if settings.cpus_per_task > 1:
            return words + ["--depth=%d" % settings.cpus_per_task, "--cpu-bind", "depth"]
        return words + ["--cpu-bind", "core"]

    def directives(self, options, settings):
        warnings, problems = [], []
        lines = [
            self.name_line(options),
            "-l %s" % select(options, settings, warnings, problems),
            place(options, settings),
            opt("-l walltime={0}", hms(options.walltime_s) if options.walltime_s else None),
            array(options.array, problems) if options.array else "",
        ] + self.common_lines(options)
        lines.extend(options.extra_directives)
        if options.mem_per_cpu_mb and not options.mem_mb:
            warnings.append("PBS Pro has no per-CPU memory: asking for %d MB per CPU times the CPUs of each chunk "
                            "instead" % options.mem_per_cpu_mb)
        for field, value, what in (("qos", options.qos, "a quality of service"),
                                   ("architecture_constraint", options.constraint, "node features"),
                                   ("request_specific_nodes", options.nodelist, "a node list"),
                                   ("memory_whole_node", options.mem_whole_node, "'all the memory of the node'")):
            if value:
                cannot(problems, field, "PBS Pro", what + " portably", value,
                       "use the site's resource in extra_directives ('-l NAME=VALUE')")
        if options.mem_per_gpu_mb and not settings.gpus:
            cannot(problems, "memory_per_gpu", "PBS Pro", "memory per GPU for a job without GPUs",
                   options.mem_per_gpu_mb, "ask for GPUs (request_gpus), or give memory_limit instead")
        if options.scratch_mb and not options.scratch_resource:
            cannot(problems, "local_scratch", "PBS Pro", "node-local scratch without the site's resource name",
                   options.scratch_mb, "set job_options.local_scratch_resource (the chunk resource the site defines)")
        refuse(problems)
        return [line for line in lines if line], warnings

    @classmethod
    def claims(cls, text):
        """#PBS directives with a select= resource are PBS Pro's."""
        return any("select=" in word for word in directive_words(text, cls.prefix))
