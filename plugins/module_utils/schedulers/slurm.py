# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm backend: #SBATCH directives."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler, hms, opt


def gres(options, settings):
    if not settings.gpus:
        return ""
    kind = ":%s" % options.gpu_type if options.gpu_type else ""
    return "--gres=gpu%s:%d" % (kind, settings.gpus)


def export(options):
    parts = []
    if options.export_all:
        parts.append("ALL")
    if options.export_vars:
        parts.extend(p for p in options.export_vars.split(",") if p not in parts)
    return "--export=%s" % ",".join(parts) if parts else ""


def default_output(options):
    """Slurm's naming with the job name: <name>-<jobid>.out, <name>-<arrayjob>_<task>.out for arrays."""
    return "%s-%s.out" % (options.job_name, "%A_%a" if options.array else "%j")


class Slurm(Scheduler):
    name = "slurm"
    prefix = "#SBATCH"
    extension = ".sbatch"
    submit_dir_var = "SLURM_SUBMIT_DIR"
    default_launcher = "srun"

    def directives(self, options, settings):
        lines = [
            "--job-name=%s" % options.job_name,
            "--nodes=%d" % settings.nodes,
            opt("--ntasks={0}", options.tasks),
            opt("--ntasks-per-node={0}", settings.tasks_per_node),
            opt("--cpus-per-task={0}", settings.cpus_per_task if settings.cpus_per_task > 1 or options.cpus_per_task
                else None),
            opt("--time={0}", hms(options.walltime_s) if options.walltime_s else None),
            opt("--partition={0}", options.queue),
            opt("--account={0}", options.account),
            opt("--qos={0}", options.qos),
            opt("--constraint={0}", options.constraint),
            opt("--mem={0}M", options.mem_mb),
            opt("--mem-per-cpu={0}M", options.mem_per_cpu_mb),
            gres(options, settings),
            opt("--array={0}", options.array),
            opt("--dependency={0}", ",".join(options.dependency) if options.dependency else None),
            opt("--begin={0}", options.begin),
            "--exclusive" if options.exclusive else "",
            opt("--mail-type={0}", ",".join(options.mail_events) if options.mail_events else None),
            opt("--mail-user={0}", options.mail_user if options.mail_events else None),
            export(options),
            opt("--nodelist={0}", options.nodelist),
            "--output=%s" % (options.stdout or default_output(options)),
            opt("--error={0}", options.stderr),
        ]
        lines.extend(options.extra_directives)
        return [line for line in lines if line], []
