# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Flux backend: ``# flux:`` directives read by ``flux batch``; flux jobs, flux cancel.

A Flux batch script runs as the first program of a new Flux instance on the resources it asked for: slots (``-n``),
each of ``-c`` cores and ``-g`` GPUs, on ``-N`` nodes. The script starts in the directory it was submitted from.
The directives are the options of flux-batch(1), one per line; Flux reads them with its own directive parser (the
suite checks modak's scripts with it, and every option against flux batch's own option list).
"""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Scheduler, cannot, opt, refuse, task_chunks)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import JobStatus, option_value

# RFC 26 dependency schemes that mean what the DSL's Slurm forms mean
DEPENDENCIES = ("after", "afterany", "afterok", "afternotok")
_PROPERTY = re.compile(r"^[A-Za-z0-9_.-]+\Z")
# RFC 36: a directive line is any non-word characters, then 'flux:' or 'FLUX:' (modak writes '# flux:')
_SENTINEL = re.compile(r"^([^\w]*)(?:flux|FLUX):(.*)$")
# Slurm's file name patterns -> the mustache templates of flux-submit(1)'s --output and --error
_PATTERNS = (("%j", "{{id}}"), ("%x", "{{name}}"))


def path(name, field, problems):
    """An output path with Slurm's %j and %x as Flux's {{id}} and {{name}}; another pattern is refused."""
    for slurm, flux in _PATTERNS:
        name = name.replace(slurm, flux)
    if "%" in name:
        cannot(problems, field, "Flux", "this file name pattern (only %j and %x have a Flux template)", name,
               "use %j (the job id) and %x (the job name) only")
    return name


def slots(options, settings, warnings, problems):
    """-N, -n, -c and -g: one slot per task, each with the task's cores and its share of the node's GPUs."""
    chunks = task_chunks(options, settings, warnings)
    total = sum(count * tpn for count, tpn in chunks)
    lines = [opt("--nodes={0}", settings.nodes if settings.nodes_fixed else None),
             "--nslots=%d" % total,
             opt("--cores-per-slot={0}", settings.cpus_per_task if settings.cpus_per_task > 1 else None)]
    if settings.gpus:
        per_node = {tpn for _count, tpn in chunks}
        if len(per_node) != 1 or settings.gpus % next(iter(per_node)):
            cannot(problems, "request_gpus", "Flux", "%d GPUs per node shared by %s task(s) per node (flux batch "
                   "gives each slot the same GPUs)" % (settings.gpus, "/".join(str(t) for t in sorted(per_node))),
                   settings.gpus, "ask for a multiple of the tasks per node")
        else:
            lines.append("--gpus-per-slot=%d" % (settings.gpus // next(iter(per_node))))
    return lines


def dependencies(dependency, problems):
    """The DSL's 'afterok:ID[:ID]' forms -> one RFC 26 URI per job: --dependency=afterok:ID."""
    lines = []
    for dep in dependency:
        kind, _sep, ids = dep.partition(":")
        if kind not in DEPENDENCIES or not ids:
            cannot(problems, "job_dependency", "Flux", "'%s'" % kind, dep, "use one of %s" % ", ".join(DEPENDENCIES))
            continue
        lines.extend("--dependency=%s:%s" % (kind, job_id) for job_id in ids.split(":"))
    return lines


def sentinel_words(text):
    """The words of the directive lines before the first command, in the sentinel forms of RFC 36."""
    words = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#!"):
            continue
        match = _SENTINEL.match(stripped)
        if match and match.group(1).strip():
            words.extend(match.group(2).split("#", 1)[0].split())
        elif not stripped.startswith("#"):
            break
    return words


def default_output(options):
    """Flux's default is flux-{{id}}.out; modak names the job too, as it does for Slurm."""
    return "%s-{{id}}.out" % options.job_name


# -- raw options: what extra_directives may carry (schedulers/extra.py checks them) --------------------------------
# flux batch's options that neither name a file (--output, --error, --input, --add-file, --env-file, --conf with a
# path, --dump), nor change what runs or where (--wrap, --cwd, --setattr, --setopt, --broker-opts, --flags, the
# hidden --add-brokers), nor how flux answers (--dry-run, --quiet, --debug-emulate). Options with a typed field are
# refused with the field.
ALLOWED_OPTIONS = dict.fromkeys(("--urgency", "--signal", "--rlimit"))
TYPED_OPTIONS = {
    "--job-name": "job_name", "-N": "node_count", "--nodes": "node_count", "-n": "core_count",
    "--nslots": "core_count", "-c": "core_count_per_process", "--cores-per-slot": "core_count_per_process",
    "-g": "request_gpus", "--gpus-per-slot": "request_gpus", "-t": "wall_time_limit",
    "--time-limit": "wall_time_limit", "-q": "queue", "--queue": "queue", "-B": "account", "--bank": "account",
    "-x": "node_exclusive", "--exclusive": "node_exclusive", "--dependency": "job_dependency",
    "--begin-time": "defer_job", "--requires": "architecture_constraint", "--env": "copy_environment_variable",
    "--output": "standard_output_file", "--error": "standard_error_file"}


class Flux(Scheduler):
    """flux batch prints the job id; flux jobs tells its state and result; flux cancel ends it."""

    name = "flux"
    prefix = "# flux:"
    extension = ".flux"
    default_launcher = "mpiexec"
    ping_argv = ("flux", "uptime")         # flux-uptime(1): the instance's state and size, an error outside one
    allowed_options = ALLOWED_OPTIONS
    typed_options = TYPED_OPTIONS

    def dependency_lines(self, dependency, problems):
        return dependencies(dependency, problems)

    def directives(self, options, settings):
        warnings, problems = [], []
        lines = ["--job-name=%s" % options.job_name]
        lines.extend(slots(options, settings, warnings, problems))
        lines.extend([
            opt("--time-limit={0}s", options.walltime_s),
            opt("--queue={0}", options.queue),
            opt("--bank={0}", options.account),
            "--exclusive" if options.exclusive and settings.nodes_fixed else "",
            opt("--begin-time={0}", options.begin),
            "--output=%s" % (path(options.stdout, "standard_output_file", problems) if options.stdout
                             else default_output(options)),
            opt("--error={0}", path(options.stderr, "standard_error_file", problems) if options.stderr else None),
        ])
        lines.extend(self.dependency_lines(options.dependency, problems))
        if options.constraint:
            if _PROPERTY.match(options.constraint):
                lines.append("--requires=%s" % options.constraint)
            else:
                cannot(problems, "architecture_constraint", "Flux", "a feature expression (--requires takes one "
                       "property here)", options.constraint, "name one property, e.g. 'avx2'")
        if options.exclusive and not settings.nodes_fixed:
            cannot(problems, "node_exclusive", "Flux", "exclusive nodes without a node count (flux batch takes "
                   "--exclusive only with --nodes)", True, "give node_count")
        if settings.nodes > 1 and settings.ranks > 1:
            cannot(problems, "node_count", "Flux", "a launch across %d nodes yet (modak has no flux run launcher: "
                   "mpiexec would start every rank on the first node)" % settings.nodes, settings.nodes,
                   "use one node, or Slurm")
        lines.extend(options.extra_directives)
        for field, value, what in (("qos", options.qos, "a quality of service"),
                                   ("memory_limit", options.mem_mb, "memory (Flux schedules cores and GPUs)"),
                                   ("minimum_memory_per_processor", options.mem_per_cpu_mb, "memory per CPU"),
                                   ("memory_per_gpu", options.mem_per_gpu_mb, "memory per GPU"),
                                   ("memory_whole_node", options.mem_whole_node, "'all the memory of the node'"),
                                   ("local_scratch", options.scratch_mb, "node-local scratch"),
                                   ("gpu_type", options.gpu_type if settings.gpus else None, "a GPU model"),
                                   ("job_array", options.array, "a job array (flux bulksubmit submits many jobs)"),
                                   ("request_event_notification", options.mail_events, "mail"),
                                   ("copy_environment_variable", options.export_vars,
                                    "a list of variables (flux batch copies the whole environment)"),
                                   ("request_specific_nodes", options.nodelist, "a node list"),
                                   ("placement", options.placement if options.placement != "free" else None,
                                    "a placement")):
            if value:
                cannot(problems, field, "Flux", what, value, "leave it out")
        refuse(problems)
        return [line for line in lines if line], warnings

    @classmethod
    def claims(cls, text):
        """Directives in any of the sentinel forms Flux reads ('# flux:', '#flux:', '#FLUX:')."""
        return bool(sentinel_words(text))

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        for words in (list(extra_args), sentinel_words(script_text)):
            name = option_value(words, ("--job-name",))
            if name:
                return name
        return super(Flux, cls).name_of(script_text, script_path, extra_args)

    def submit(self, script, extra_args=(), digest=None):
        _rc, out, _err = self.runner.run(submit_argv(script, extra_args))
        job_id = out.strip().splitlines()[-1].strip() if out.strip() else ""
        if not job_id or not JOB_ID.match(job_id):
            raise SubmitError("flux batch printed no job id: %r" % (out,))
        return job_id

    def status(self, job_id):
        argv = status_argv(job_id)
        rc, out, err = self.runner.run(argv, check=False)
        if rc != 0 or not out.strip():
            raise SubmitError("flux jobs failed (rc %d): %s" % (rc, (err or out).strip() or "no such job"), cmd=argv,
                              rc=rc, stdout=out, stderr=err)
        return parse_status(job_id, out)

    def cancel(self, job_id):
        self.runner.run(cancel_argv(job_id))


# -- submission ----------------------------------------------------------------------------------------------------
# job ids: flux batch prints the F58 form ('ƒ' and base58 digits); flux jobs and flux cancel take every form
JOB_ID = re.compile(r"^(ƒ|f)?[1-9A-HJ-NP-Za-km-z]+\Z|^[0-9]+\Z")
# flux-jobs(1), JOB STATUS: a job is DEPEND, PRIORITY, SCHED, RUN or CLEANUP while active, then INACTIVE with a
# result, COMPLETED, FAILED, CANCELED or TIMEOUT
ACTIVE = {"NEW": "PENDING", "DEPEND": "PENDING", "PRIORITY": "PENDING", "SCHED": "PENDING", "RUN": "RUNNING",
          "CLEANUP": "COMPLETING"}
RESULTS = {"COMPLETED": "COMPLETED", "FAILED": "FAILED", "CANCELED": "CANCELLED", "TIMEOUT": "TIMEOUT"}
FORMAT = "{id.f58}|{name}|{state}|{result}|{returncode}|{runtime}"


def submit_argv(script, extra_args=()):
    return ["flux", "batch"] + list(extra_args) + [script]


def status_argv(job_id):
    return ["flux", "jobs", "--no-header", "--format=%s" % FORMAT, str(job_id)]


def cancel_argv(job_id):
    return ["flux", "cancel", str(job_id)]


def parse_status(job_id, out):
    """One flux jobs line (FORMAT) -> JobStatus in Slurm's words (the suite's state vocabulary)."""
    parts = out.strip().splitlines()[0].split("|")
    if len(parts) != 6:
        raise SubmitError("flux jobs printed %r, not %s" % (out.strip(), FORMAT))
    _id, name, state, result, code, runtime = (p.strip() for p in parts)
    if state in ACTIVE:
        word, active, exit_code = ACTIVE[state], True, None
    else:
        word, active = RESULTS.get(result, "FAILED"), False
        exit_code = int(code) if code.lstrip("-").isdigit() else None
    try:
        elapsed = int(float(runtime))
    except ValueError:
        elapsed = None
    return JobStatus(job_id=str(job_id), state=word, active=active, exit_code=exit_code, elapsed=elapsed,
                     name=name or None, raw={"state": state, "result": result, "returncode": code})
