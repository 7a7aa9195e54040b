# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm backend: #SBATCH directives."""

from __future__ import annotations

import os
import re
import time

from ansible_collections.sodalite.modak.plugins.module_utils.commands import message
from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Scheduler, cannot, hms, opt, refuse)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import (
    ACTIVE_STATES, JobStatus, StartEstimate, directive_words, elapsed_seconds, option_value, whole_index)


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


# -- raw options: what extra_directives may carry (schedulers/extra.py checks them) --------------------------------
# sbatch takes abbreviations of long options and options that name files (--output, --chdir, --export-file),
# change who runs the job (--uid) or what runs (--wrap): only options that do neither are listed. Options with a
# typed field are refused with the field to use, so that they pass that field's checks.
ALLOWED_OPTIONS = dict.fromkeys((
    "--acctg-freq", "--cluster-constraint", "--clusters", "--comment", "--contiguous", "--core-spec",
    "--cores-per-socket", "--cpu-freq", "--cpus-per-gpu", "--deadline", "--delay-boot", "--distribution", "--exclude",
    "--exclusive", "--extra", "--extra-node-info", "--gpu-bind", "--gpu-freq", "--gpus", "--gpus-per-node",
    "--gpus-per-socket", "--gpus-per-task", "--gres", "--gres-flags", "--hint", "--hold", "--ignore-pbs",
    "--kill-on-invalid-dep", "--licenses", "--mcs-label", "--mem-bind", "--mincpus", "--network",
    "--nice", "--no-kill", "--no-requeue", "--ntasks-per-core", "--ntasks-per-gpu", "--ntasks-per-socket",
    "--open-mode", "--overcommit", "--oversubscribe", "--power", "--prefer", "--priority", "--profile", "--propagate",
    "--reboot", "--requeue", "--reservation", "--segment", "--signal", "--sockets-per-node", "--spread-job",
    "--switches", "--thread-spec", "--threads-per-core", "--time-min", "--tres-per-task", "--use-min-nodes",
    "--wckey",
    # short forms: -B extra-node-info, -G gpus, -H hold, -L licenses, -M clusters, -O overcommit, -S core-spec,
    # -k no-kill, -m distribution, -s oversubscribe, -x exclude
    "-B", "-G", "-H", "-L", "-M", "-O", "-S", "-k", "-m", "-s", "-x"))
ALLOWED_OPTIONS["--wait-all-nodes"] = ("0", "1")   # names no file: start only once every node is up (sbatch(1))
# srun(1)'s options of a launch, as training scripts write them: binding, distribution, PMI, ending a step whose
# task failed; none names a file, a user or a program. "" allows the bare flag.
LAUNCH_OPTIONS = {
    "--kill-on-bad-exit": ("", "0", "1"), "-K": ("", "0", "1"), "--wait": None, "-W": None,
    "--cpu-bind": None, "--gpu-bind": None, "--accel-bind": None, "--mem-bind": None, "--distribution": None,
    "-m": None, "--hint": None, "--mpi": ("none", "pmi2", "pmix", "pmix_v3", "pmix_v4", "pmix_v5", "cray_shasta"),
    "--exact": ("",), "--label": ("",), "-l": ("",), "--unbuffered": ("",), "-u": ("",), "--overlap": ("",),
    "--gpus-per-task": None, "--cpus-per-gpu": None, "--ntasks-per-gpu": None, "--network": None,
    "--threads-per-core": None, "--cpu-freq": None, "--gres-flags": None}
LAUNCH_TYPED_OPTIONS = {   # the launch starts what the directives allocate: these come from the job's fields
    "--ntasks": "job_options.core_count", "-n": "job_options.core_count", "--nodes": "job_options.node_count",
    "-N": "job_options.node_count", "--ntasks-per-node": "job_options.process_count_per_node",
    "--cpus-per-task": "job_options.core_count_per_process", "-c": "job_options.core_count_per_process",
    "--container-image": "application.container_runtime (target.container_engine: pyxis)"}
TYPED_OPTIONS = {
    "--output": "standard_output_file", "-o": "standard_output_file", "--error": "standard_error_file",
    "-e": "standard_error_file", "--job-name": "job_name", "-J": "job_name", "--partition": "partition",
    "-p": "partition", "--account": "account", "-A": "account", "--qos": "qos", "-q": "qos",
    "--time": "wall_time_limit", "-t": "wall_time_limit", "--nodes": "node_count", "-N": "node_count",
    "--ntasks": "core_count", "-n": "core_count", "--ntasks-per-node": "process_count_per_node",
    "--cpus-per-task": "core_count_per_process", "-c": "core_count_per_process", "--mem": "memory_limit",
    "--mem-per-cpu": "minimum_memory_per_processor", "--array": "job_array", "-a": "job_array",
    "--dependency": "job_dependency", "-d": "job_dependency", "--begin": "defer_job", "-b": "defer_job",
    "--mail-type": "request_event_notification", "--mail-user": "email_address",
    "--export": "copy_environment_variable", "--nodelist": "request_specific_nodes", "-w": "request_specific_nodes",
    "--constraint": "architecture_constraint", "-C": "architecture_constraint",
    "--mem-per-gpu": "memory_per_gpu", "--tmp": "local_scratch"}


# -- submission: sbatch --parsable, squeue/scontrol show job -o, then sacct -c (the job-completion log) -------------

COMMENT_PREFIX = "modak:"
QUEUED_STATES = "PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED,RESIZING"


def submit_argv(script, extra_args=(), digest=None, test_only=False):
    if test_only:
        return ["sbatch", "--test-only"] + list(extra_args) + [script]
    comment = ["--comment=%s%s" % (COMMENT_PREFIX, digest)] if digest else []
    return ["sbatch", "--parsable"] + comment + list(extra_args) + [script]


def start_estimate_argv():
    """sbatch --test-only reading the script from standard input; SLURM_TIME_FORMAT=standard: the start in ISO 8601
    whatever the caller's environment asks (sbatch(1), ENVIRONMENT VARIABLES)."""
    return ["env", "SLURM_TIME_FORMAT=standard", "sbatch", "--test-only"]


# sbatch --test-only on standard error (slurm_job_will_run): 'sbatch: Job 42 to start at 2026-01-02T03:04:05 using
# 4 processors on nodes mn1 in partition fast'
_WILL_RUN = re.compile(r"\bJob \d+ to start at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) using \d+ processors on nodes (\S+)")


def parse_start_estimate(text):
    """(start as seconds since the epoch, the nodes) from sbatch --test-only's words, the time read in the local
    time zone as sbatch writes it; None when they name no start."""
    found = _WILL_RUN.search(text or "")
    if not found:
        return None
    return time.mktime(time.strptime(found.group(1), "%Y-%m-%dT%H:%M:%S")), found.group(2)


def show_argv(job_id):
    return ["scontrol", "show", "job", "-o", str(job_id)]


def accounting_argv(job_id, completion_log=False):
    argv = ["sacct"]
    if completion_log:
        argv.append("-c")          # read the job-completion log (no slurmdbd needed)
    return argv + ["-j", str(job_id), "-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"]


def find_argv(name):
    return ["squeue", "--me", "--noheader", "--name=%s" % name, "--states=%s" % QUEUED_STATES,
            "--format=%i|%k|%T"]


def cancel_argv(job_id):
    return ["scancel", str(job_id)]


def job_name(script_text, script_path, extra_args=()):
    """The name sbatch will give the job: command line, then #SBATCH lines, then the script's file name."""
    for words in (list(extra_args), directive_words(script_text, "#SBATCH")):
        name = option_value(words, ("--job-name",), ("-J",))
        if name:
            return name
    return script_path.rstrip("/").split("/")[-1]


def check_comment(script_text, extra_args=()):
    """Refuse a comment in modak's namespace: ``--comment=modak:`` is the idempotence key batch_job sets itself,
    and a script or argument that sets it could pass one job off as another. sbatch takes any unambiguous
    prefix of a long option (``--comm=``), so those count too."""
    words = directive_words(script_text, "#SBATCH") + list(extra_args)
    for i, word in enumerate(words):
        name, sep, value = word.partition("=")
        if len(name) >= 5 and "--comment".startswith(name):
            value = value if sep else (words[i + 1] if i + 1 < len(words) else "")
            if value.strip().strip("'\"").lower().startswith(COMMENT_PREFIX):
                raise SubmitError("%r: the comment prefix %r is reserved for batch_job's idempotence key (the content "
                                  "hash it sets itself); use another comment" % (word, COMMENT_PREFIX))


def owned_by_us(fields, name, script_path):
    """A job found by its comment is ours only when it also has our user, our job name and our script."""
    user = (fields.get("UserId") or "").partition("(")[2].rstrip(")")
    return (user == str(os.getuid()) and fields.get("JobName") == name
            and (script_path is None or fields.get("Command") == script_path))


_CLUSTER_ID = re.compile(r"^(\d+);[A-Za-z0-9_.-]{1,64}\Z")     # sbatch --parsable on a multi-cluster site


def parse_job_id(out):
    """sbatch --parsable prints 'id' or 'id;cluster'."""
    first = (out or "").strip().splitlines()
    if not first or not first[0].split(";")[0].strip().isdigit():
        raise SubmitError("sbatch printed no job id: %r" % (out,))
    return first[0].split(";")[0].strip()


def parse_show(text):
    """One `scontrol show job -o` line -> dict (values may hold spaces only at the end; keep it simple). A job's
    user writes text that scontrol prints among its own fields (JobName before UserId, Comment after it): a line
    that names the user twice names no user (job_control.owner_uid then takes no owner from it)."""
    fields, users = {}, 0
    for token in text.strip().split():
        key, sep, value = token.partition("=")
        if sep:
            users += key == "UserId"
            fields[key] = value
    if users > 1:
        del fields["UserId"]
    return fields


def exit_code(text):
    """Slurm 'code:signal' -> the exit code; a signal gives 128 + signal, as a shell would."""
    if not text:
        return None
    code, _sep, signal = text.partition(":")
    try:
        code, signal = int(code), int(signal or 0)
    except ValueError:
        return None
    return 128 + signal if signal and not code else code


def _count(text):
    """scontrol's Restarts=N (the job's requeues: scontrol(1)) as an int; None when absent or not a number."""
    return int(text) if text and text.isdigit() else None


def _base_state(state):
    # 'CANCELLED by 0' is printed by sacct; JobState may carry flags after '+'
    return state.split()[0].split("+")[0] if state else "UNKNOWN"


class Slurm(Scheduler):
    """sbatch --parsable, scontrol show job -o, then sacct (-c: the job-completion log); scancel."""

    name = "slurm"
    prefix = "#SBATCH"
    extension = ".sbatch"
    submit_dir_var = "SLURM_SUBMIT_DIR"
    default_launcher = "srun"
    allowed_options = ALLOWED_OPTIONS
    typed_options = TYPED_OPTIONS
    array_index_expr = "$SLURM_ARRAY_TASK_ID"     # sbatch(1), OUTPUT ENVIRONMENT VARIABLES
    array_job_expr = "$SLURM_ARRAY_JOB_ID"
    ping_argv = ("scontrol", "ping")       # scontrol(1): "Slurmctld(primary) at HOST is UP" (or DOWN), a line
    #                                        for each controller; the cluster takes jobs while one of them is up

    def up(self, out):
        return any(line.rstrip().endswith(" is UP") for line in out.splitlines())
    launch_options = LAUNCH_OPTIONS
    launch_typed_options = LAUNCH_TYPED_OPTIONS
    node_cpus_var = "SLURM_CPUS_ON_NODE"     # sbatch(1), OUTPUT ENVIRONMENT VARIABLES
    task_cpus_var = "SLURM_CPUS_PER_TASK"   # set when --cpus-per-task is given
    # sed reads the whole list: head would exit after one line, and under pipefail scontrol's SIGPIPE (status 141)
    # would end the job on a long node list
    first_node_expr = '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)'
    job_number_expr = "$SLURM_JOB_ID"
    node_count_expr = '"$SLURM_NNODES"'
    hosts_command = 'scontrol show hostnames "$SLURM_JOB_NODELIST"'
    node_rank_var = "SLURM_NODEID"           # srun(1): the node's index in the step

    @classmethod
    def step_words(cls, settings):
        """srun with exactly the tasks the directives allocate, and the DSL's launch options."""
        words = ["srun", "--nodes=%d" % settings.nodes, "--ntasks=%d" % settings.ranks,
                 "--ntasks-per-node=%d" % settings.tasks_per_node]
        if settings.cpus_per_task > 1:
            words.append("--cpus-per-task=%d" % settings.cpus_per_task)
        return words + list(settings.launch_options)

    # job.resilience: sbatch(1) sets SLURM_RESTART_COUNT once the job was requeued; --signal=B: signals the batch
    # shell alone, which forwards the program's signal; scontrol(1) requeue puts the job back (PENDING, then
    # BeginTime for about two minutes)
    restart_count_var = "SLURM_RESTART_COUNT"
    limit_signal = "USR1"
    requeue_line = 'scontrol requeue "$SLURM_JOB_ID"'
    # scontrol(1) shows PreemptTime= once the controller chose the job for preemption (None before); a job that
    # ends by itself within the partition's GraceTime is not requeued by PreemptMode=REQUEUE: it requeues itself
    preempted_test = '[[ "$(scontrol show job -o "$SLURM_JOB_ID" 2>/dev/null)" == *" PreemptTime="[0-9]* ]]'
    resilience_options = ("--signal", "--requeue", "--no-requeue", "--open-mode")

    def resilience_directives(self, res):
        """USR1 to the batch shell lead_s before the limit (Slurm may send it up to 60 s earlier), rerunnable
        (preemption with PreemptMode=REQUEUE, a lost node, scontrol requeue), and one output file for every
        segment (appended, not truncated, when the job starts again)."""
        lead = ["--signal=B:%s@%d" % (self.limit_signal, min(res.lead_s, 65535))] if res.lead_s else []
        return lead + ["--requeue", "--open-mode=append"]

    def forward_line(self, signal):
        """scancel(1) without --batch or --full signals every step of the job, not the batch shell: each task of the
        launch (a rank, or a node's torchrun) gets the signal, srun's own handling of TERM (killing the step) is
        not involved."""
        return 'scancel --signal=%s "$SLURM_JOB_ID"' % signal

    def dependency_lines(self, dependency, problems):
        return [opt("--dependency={0}", ",".join(dependency) if dependency else None)]

    @classmethod
    def after_args(cls, after):
        """--dependency, and a job whose dependency can never be met is cancelled instead of pending for ever. An id
        as sbatch --parsable prints it on a multi-cluster site ('42;cluster1', the staging and build jobs' ids
        alike) waits for '42': --dependency takes the id alone."""
        after = [(_CLUSTER_ID.sub(r"\1", job), kind) for job, kind in after]
        words = super(Slurm, cls).after_args(after)
        return words + ["--kill-on-invalid-dep=yes"] if words else words

    def directives(self, options, settings):
        lines = [
            "--job-name=%s" % options.job_name,
            opt("--nodes={0}", settings.nodes if settings.nodes_fixed else None),   # none: Slurm spreads --ntasks
            opt("--ntasks={0}", settings.tasks),
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
            opt("--mem-per-gpu={0}M", options.mem_per_gpu_mb),
            "--mem=0" if options.mem_whole_node else "",
            opt("--tmp={0}M", options.scratch_mb),
            gres(options, settings),
            opt("--array={0}", options.array),
        ] + self.dependency_lines(options.dependency, []) + [
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
        problems = []
        if options.placement in ("pack", "scatter"):
            cannot(problems, "placement", "Slurm", "a placement (PBS Pro's place=%s)" % options.placement,
                   options.placement, "Slurm places by node_count and process_count_per_node; leave placement out")
        refuse(problems)
        return [line for line in lines if line], []

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        return job_name(script_text, script_path, extra_args)

    def test_only(self, script, extra_args=()):
        """Check a submission without submitting: sbatch --test-only answers on stderr."""
        _rc, out, err = self.runner.run(submit_argv(script, extra_args, test_only=True))
        return (err or out).strip()

    def start_estimate(self, script_text):
        """sbatch --test-only with the script on standard input: the controller places the job as if submitted now
        (from the time limits of the jobs before it) and submits nothing; a refusal (exit status not 0) says why."""
        rc, out, err = self.runner.run(start_estimate_argv(), check=False, input_text=script_text)
        said = message(out, err)
        if rc != 0:
            return StartEstimate(fits=False, said=said)
        found = parse_start_estimate(err + "\n" + out)
        if found is None:
            return StartEstimate(fits=True, said=said)
        return StartEstimate(fits=True, start=found[0], said=said, nodes=found[1])

    def submit(self, script, extra_args=(), digest=None):
        _rc, out, _err = self.runner.run(submit_argv(script, extra_args, digest))
        return parse_job_id(out)

    def check(self, script_text, extra_args=()):
        check_comment(script_text, extra_args)

    def find_active(self, name, digest):
        """A queued or running job of ours with this name and content, or None.

        A job whose comment carries the digest is ours only when it also has our user, name and script."""
        _rc, out, _err = self.runner.run(find_argv(name))
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) >= 2 and parts[1] == COMMENT_PREFIX + digest:
                try:
                    fields = self.status(parts[0]).raw
                except SubmitError:
                    continue
                if owned_by_us(fields, name, self.script_path):
                    return parts[0]
        return None

    def status(self, job_id):
        rc, out, err = self.runner.run(show_argv(job_id), check=False)
        if rc == 0 and out.strip():
            # one line per element of an array (scontrol(1)): the array is active while one element is
            records = [parse_show(line) for line in out.splitlines() if line.strip()]
            fields = records[whole_index([_base_state(r.get("JobState")) for r in records])]
            state = _base_state(fields.get("JobState"))
            if state == "COMPLETED" and "ArrayJobId" in fields:
                # the controller forgets an element MinJobAge after it ended: accounting (slurmdbd, whose ids are
                # the cluster's own; the job-completion log may hold an earlier job of the same number) keeps it
                try:
                    accounted = self._finished(job_id, (False,))
                except SubmitError:
                    accounted = None
                if accounted is not None and accounted.state != "COMPLETED":
                    return accounted
            return JobStatus(job_id=str(job_id), state=state, active=state in ACTIVE_STATES,
                             exit_code=None if state in ACTIVE_STATES else exit_code(fields.get("ExitCode")),
                             stdout_path=fields.get("StdOut"), stderr_path=fields.get("StdErr"),
                             elapsed=elapsed_seconds(fields.get("RunTime")), name=fields.get("JobName"),
                             comment=fields.get("Comment"), raw=fields, restarts=_count(fields.get("Restarts")),
                             nodes=fields.get("NodeList") or None,
                             restarts_from="scontrol show job: Restarts=" if "Restarts" in fields else None)
        if "Invalid job id" not in (err + out):
            raise SubmitError("scontrol failed (rc %d): %s" % (rc, (err or out).strip()), cmd=show_argv(job_id),
                              rc=rc, stdout=out, stderr=err)
        return self._finished(job_id)

    def _finished(self, job_id, logs=(False, True)):
        """The job left the controller's memory: ask accounting, then the job-completion log."""
        for completion_log in logs:
            rc, out, _err = self.runner.run(accounting_argv(job_id, completion_log), check=False)
            # the job, or each element of an array (JobID <id>_<index>)
            found = [parts for parts in (line.split("|") for line in out.splitlines())
                     if rc == 0 and len(parts) >= 5 and str(job_id) in (parts[0], parts[0].split("_")[0])]
            if found:
                parts = found[whole_index([_base_state(p[2]) for p in found])]
                state = _base_state(parts[2])
                return JobStatus(job_id=str(job_id), state=state, active=state in ACTIVE_STATES,
                                 exit_code=exit_code(parts[3]), elapsed=elapsed_seconds(parts[4]), name=parts[1])
        raise SubmitError("Slurm knows no job %s (not in the queue, accounting or the job-completion log)" % job_id)

    def cancel(self, job_id):
        self.runner.run(cancel_argv(job_id))
