# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Son of Grid Engine (and Sun/Univa Grid Engine): #$ directives; qsub -terse, qstat -j, qacct -j, qdel."""

from __future__ import annotations

import math
import os
import pwd
import re
import time

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Except, Scheduler, cannot, hms, opt, pbs_begin, pbs_events, refuse)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import (
    JobStatus, directive_words, elapsed_seconds, option_value, whole_index)

# parallel environments asked for by -pe: one host ($pe_slots) or spread over hosts; sites name theirs
# differently, so a site names its own with job_options.parallel_environment
SMP_PE = "smp"
MPI_PE = "mpi"
GPU_RESOURCE = "gpu"      # -l gpu=N, when the site names no other resource
# Slurm's file name patterns -> Grid Engine's pseudo environment variables in -o/-e paths
_PATTERNS = (("%j", "$JOB_ID"), ("%A", "$JOB_ID"), ("%a", "$TASK_ID"), ("%x", "$JOB_NAME"), ("%u", "$USER"))
_ARRAY = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?(?:%(\d+))?\Z")


# -- directives (pure) ----------------------------------------------------------------------------------------------

def job_name_word(name):
    """Grid Engine takes no job name that starts with a digit."""
    return name if not name[:1].isdigit() else "j" + name


def path(name):
    for slurm, ge in _PATTERNS:
        name = name.replace(slurm, ge)
    return name


def slots(settings, tasks=None):
    """Slots of the job: every task's CPUs; the tasks are core_count (all of them, as Slurm's --ntasks) when given."""
    if tasks:
        return tasks * settings.cpus_per_task
    return settings.nodes * (settings.tasks_per_node or 1) * settings.cpus_per_task


def one_host(settings):
    """The job's slots are on one host: one node asked for, or no node count and a single (threaded) task."""
    if settings.nodes_fixed or settings.tasks_per_node:
        return settings.nodes == 1
    return (settings.tasks or 1) <= 1


def parallel_environment(settings, tasks=None, name=None):
    """-pe NAME SLOTS: the site's environment when named, else smp on one host and mpi over several."""
    count = slots(settings, tasks)
    if count <= 1 and not name:
        return ""
    return "-pe %s %d" % (name or (SMP_PE if one_host(settings) else MPI_PE), count)


def memory(options, settings, problems):
    """h_vmem is per slot: memory per node divided among the node's slots, or the memory per CPU."""
    if options.mem_per_cpu_mb:
        return "-l h_vmem=%dM" % options.mem_per_cpu_mb
    if options.mem_mb:
        if not (settings.nodes_fixed or settings.tasks_per_node) and (settings.tasks or 1) > 1:
            cannot(problems, "memory_limit", "Grid Engine without node_count", "memory per node (its memory is per "
                   "slot and the slots per host are not known)", options.mem_mb,
                   "give minimum_memory_per_processor, or node_count and process_count_per_node")
            return ""
        per_node = (settings.tasks_per_node or 1) * settings.cpus_per_task
        if not settings.tasks_per_node and settings.tasks and settings.nodes:
            per_node = int(math.ceil(settings.tasks / float(settings.nodes))) * settings.cpus_per_task
        return "-l h_vmem=%dM" % int(math.ceil(options.mem_mb / float(per_node)))
    return ""


def gpus(options, settings, problems):
    """-l gpu=N (the site's resource name): GPUs of the job, which Grid Engine cannot spread per node."""
    if not settings.gpus:
        return ""
    if settings.nodes_fixed and settings.nodes > 1:
        cannot(problems, "request_gpus", "Grid Engine", "GPUs per node on several nodes (resources are per job or "
               "per slot)", settings.gpus, "ask for one node, or use the site's resources in extra_directives")
    if options.gpu_type:
        cannot(problems, "gpu_type", "Grid Engine", "a GPU model portably", options.gpu_type,
               "use the site's resource in extra_directives (e.g. '-ac allow=L' at UCL)")
    return "-l %s=%d" % (options.gpu_resource or GPU_RESOURCE, settings.gpus)


def scratch(options, problems):
    if not options.scratch_mb:
        return ""
    if not options.scratch_resource:
        cannot(problems, "local_scratch", "Grid Engine", "node-local scratch without the site's resource name",
               options.scratch_mb, "set job_options.local_scratch_resource (e.g. tmpfs at UCL)")
        return ""
    return "-l %s=%dM" % (options.scratch_resource, options.scratch_mb)


def array(spec, problems):
    match = _ARRAY.match(spec)
    if not match or int(match.group(1)) < 1:
        cannot(problems, "job_array", "Grid Engine", "this array (one range 'start[-end[:step]][%max]' of task ids "
               "from 1)", spec, "write one range starting at 1, e.g. 1-10")
        return []
    first, last, step, throttle = match.groups()
    lines = ["-t %s%s%s" % (first, "-" + last if last else "", ":" + step if step else "")]
    if throttle:
        lines.append("-tc %s" % throttle)
    return lines


def hold(dependency, problems):
    """Slurm dependencies -> -hold_jid: Grid Engine waits for the jobs to end, whatever their exit status."""
    ids = []
    for dep in dependency:
        kind = dep.split(":", 1)[0]
        if kind not in ("after", "afterany"):
            cannot(problems, "job_dependency", "Grid Engine", "'%s' (-hold_jid waits for the jobs to end whatever "
                   "their exit status)" % kind, dep, "use afterany:ID, or test the exit status in the job")
            continue
        for part in dep.split(":")[1:]:
            job = part.split("+")[0].split("_")[0]
            if not job.isdigit():
                cannot(problems, "job_dependency", "Grid Engine", "a job id that is not a number (-hold_jid would "
                       "read it as a job name or a pattern)", dep, "give the job's number")
                continue
            ids.append(job)
    return "-hold_jid %s" % ",".join(ids) if ids else ""


# -- submission: qsub -terse, qstat -j, qacct -j, qdel --------------------------------------------------------------

CONTEXT = "modak"                       # qsub -ac modak=<digest>: the job's content hash, read back by qstat -j
# raw options extra_directives may carry. Left out: -o, -e, -i, -wd, -jsv, -@ (files and directories), -u (a user),
# -S, -shell, -b, -noshell (what runs the job), -C (the directive prefix), -clear (drops modak's own lines), -ac,
# -sc, -dc (the context holds batch_job's key), -sync, -terse, -pty (how qsub answers) and -w v|p (verify only).
# -pe takes two words: the parallel environment and the slots.
# -l takes the site's complexes, except those a typed field writes: after its line a raw one would win
TYPED_RESOURCES = Except(("h_rt", "s_rt", "h_vmem", "s_vmem", GPU_RESOURCE))
ALLOWED_OPTIONS = dict(dict.fromkeys((
    "-P", "-p", "-ar", "-binding", "-ckpt", "-c", "-dl", "-h", "-hard", "-soft", "-hold_jid_ad", "-js",
    "-masterq", "-notify")), **{"-pe": 2, "-R": ("y", "n"), "-r": ("y", "n"), "-now": ("y", "n"),
                                "-w": ("e", "w", "n"), "-l": TYPED_RESOURCES})
TYPED_OPTIONS = {"-N": "job_name", "-q": "queue", "-A": "account", "-t": "job_array", "-tc": "job_array",
                 "-hold_jid": "job_dependency", "-a": "defer_job", "-m": "request_event_notification",
                 "-M": "email_address", "-V": "copy_environment", "-v": "copy_environment_variable",
                 "-o": "standard_output_file", "-e": "standard_error_file", "-j": "combine_stdout_stderr"}
# qstat(1), the job's state letters: d(eletion), E(rror), h(old), r(unning), R(estarted), s, S, T (suspended),
# t(ransfer), w(aiting), q(ueued) -> Slurm's words (a job that left qstat is read from qacct(1))
ACTIVE = {"r": "RUNNING", "t": "TRANSIT", "R": "RUNNING", "s": "SUSPENDED", "S": "SUSPENDED", "T": "SUSPENDED",
          "h": "HELD", "w": "PENDING", "q": "PENDING", "d": "EXITING", "E": "ERROR"}


def submit_argv(script, extra_args=(), digest=None, verify=False):
    if verify:
        return ["qsub", "-terse", "-w", "v"] + list(extra_args) + [script]
    context = ["-ac", "%s=%s" % (CONTEXT, digest)] if digest else []
    return ["qsub", "-terse"] + context + list(extra_args) + [script]


def show_argv(job_id):
    return ["qstat", "-j", str(job_id)]


def list_argv():
    return ["qstat", "-u", "*"]


def accounting_argv(job_id):
    return ["qacct", "-j", str(job_id)]


def cancel_argv(job_id):
    return ["qdel", str(job_id)]


def job_name(script_text, script_path, extra_args=()):
    for words in (list(extra_args), directive_words(script_text, "#$")):
        name = option_value(words, (), ("-N",))
        if name:
            return name
    return script_path.rstrip("/").split("/")[-1]


def _user_name():
    return pwd.getpwuid(os.getuid()).pw_name


def check_context(script_text, extra_args=()):
    """Refuse a context variable named ``modak`` set by the script or the arguments: ``-ac modak=<sha256>`` is
    batch_job's idempotence key, which it sets itself; a forged one could pass one job off as another."""
    words = directive_words(script_text, "#$") + list(extra_args)
    for i, word in enumerate(words[:-1]):
        if word in ("-ac", "-sc", "-dc"):
            names = [item.split("=", 1)[0].strip().lower() for item in words[i + 1].split(",")]
            if CONTEXT in names:
                raise SubmitError("%s %s: the context variable %r is reserved for batch_job's idempotence key (the "
                                  "content hash it sets itself); use another name" % (word, words[i + 1], CONTEXT))


def owned_by_us(fields, name, script_path):
    """A job found by its context is ours only when it also has our user, our job name and our script."""
    return (fields.get("owner") == _user_name() and fields.get("job_name") == name
            and (script_path is None or fields.get("script_file") == script_path))


def parse_job_id(out):
    """qsub -terse prints '42', or '42.1-10:1' for an array."""
    first = (out or "").strip().split("\n")[0].strip()
    job_id = first.split(".")[0]
    if not job_id.isdigit():
        raise SubmitError("qsub printed no job id: %r" % (out,))
    return job_id


_COLON_FIELD = re.compile(r"^(\S+(?: \S+)*?):\s+(.*)$")      # qstat -j: 'hard resource_list:   h_rt=60'
_SPACED_FIELD = re.compile(r"^(\S+)\s+(.*)$")                # qacct -j: 'exit_status  3'


def parse_fields(text):
    """`qstat -j` and `qacct -j` answers -> list of dicts, one per job (blocks split by '====' lines)."""
    blocks, fields = [], {}
    for line in text.splitlines():
        if line.startswith("=" * 10):
            if fields:
                blocks.append(fields)
            fields = {}
            continue
        match = _COLON_FIELD.match(line.rstrip()) or _SPACED_FIELD.match(line.rstrip())
        if match:
            fields[match.group(1)] = match.group(2).strip()
    if fields:
        blocks.append(fields)
    return blocks


def list_states(text):
    """`qstat -u '*'` -> {job id: state letters} ('qw', 'r', 'hqw', 'Eqw', 'dr'...)."""
    states = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5 and words[0].isdigit():
            states.setdefault(words[0], words[4])
    return states


def _paths(value, job_id, name, folder="", letter="o"):
    """'NONE:host:/path' or 'path' in stdout_path_list -> the path (relative ones in folder), variables filled in;
    none given: Grid Engine's own name, <job name>.o<job id> (``letter`` e for errors) in the job's folder
    (qsub(1), -o)."""
    if not value:
        return "%s/%s.%s%s" % (folder.rstrip("/"), name, letter, job_id) if folder and name else None
    found = value.split(",")[0].split(":")[-1]
    found = found.replace("$JOB_ID", str(job_id)).replace("$JOB_NAME", name or "")
    return found if found.startswith("/") or not folder else folder.rstrip("/") + "/" + found


def state_word(letters):
    for letter in ("E", "d", "h", "s", "S", "T", "t", "r", "R", "w", "q"):
        if letter in letters:
            return ACTIVE[letter]
    return "PENDING"


def ended(fields):
    """A qacct record -> (state, exit code)."""
    failed = fields.get("failed", "0").split()[0]
    code = fields.get("exit_status", "").split()[0] if fields.get("exit_status") else ""
    code = int(code) if code.isdigit() else None
    reason = fields.get("failed", "")
    if "h_rt" in reason or "s_rt" in reason:
        return "TIMEOUT", code
    if failed != "0" and "after job" in reason:          # 100 : assumedly after job (qdel, a signal)
        return ("CANCELLED" if fields.get("deleted_by") or code in (137, 143) else "FAILED"), code
    if failed != "0":
        return "FAILED", code
    return ("COMPLETED" if code == 0 else "FAILED"), code


class GridEngine(Scheduler):
    name = "gridengine"
    prefix = "#$"
    extension = ".sge"
    submit_dir_var = "SGE_O_WORKDIR"
    default_launcher = "mpirun"
    host_file = "PE_HOSTFILE"
    exclusive_nodes = False                         # no portable resource for it: a site names its own
    array_first = 1                                 # qsub(1), -t: task ids from 1, in SGE_TASK_ID
    array_index_expr = "$((SGE_TASK_ID - 1))"
    array_job_expr = "$JOB_ID"
    ping_argv = ("qstat", "-g", "c")       # qstat(1): the cluster queue summary; "unable to contact qmaster" else
    host_file_form = "pe"
    resilience_options = ("-r", "-ckpt", "-c")

    def resilience_directives(self, res):
        """-r y: the job is rerunnable, so the master reschedules it when its host goes down or when it is
        preempted by a suspend-and-reschedule policy (qsub(1)). A checkpointing environment (-ckpt, a site's
        checkpoint(5) object) would add a signal at the queue's min_cpu_interval and on migration; modak names
        none, as no environment is the same at two sites."""
        return ["-r y"]
    allowed_options = ALLOWED_OPTIONS
    typed_options = TYPED_OPTIONS
    node_cpus_var = "NSLOTS"     # sge_pe(5)/qsub(1): the slots granted to the whole job
    node_cpus_total = True
    accounting_tries = 10            # qmaster writes the accounting record just after the job leaves qstat
    accounting_pause = 0.5

    def dependency_lines(self, dependency, problems):
        return [hold(dependency, problems)]

    def directives(self, options, settings):
        warnings, problems = [], []
        lines = [
            "-N %s" % job_name_word(options.job_name),
            "-S /bin/bash",
            "-cwd",
            parallel_environment(settings, settings.tasks, options.parallel_environment),
            opt("-l h_rt={0}", hms(options.walltime_s) if options.walltime_s else None),
            memory(options, settings, problems),
            gpus(options, settings, problems),
            scratch(options, problems),
            opt("-q {0}", options.queue),
            opt("-A {0}", options.account),
        ]
        lines.extend(array(options.array, problems) if options.array else [])
        lines.extend(self.dependency_lines(options.dependency, problems))
        lines.extend([
            opt("-a {0}", pbs_begin(options.begin) if options.begin else None),
            opt("-m {0}", pbs_events(options.mail_events) if options.mail_events else None),
            opt("-M {0}", options.mail_user if options.mail_events else None),
            "-V" if options.export_all else "",
            opt("-v {0}", options.export_vars),
            opt("-o {0}", path(options.stdout) if options.stdout else None),  # none: <name>.o<id> in -cwd
            "-e %s" % path(options.stderr) if options.stderr else "-j y",
        ])
        lines.extend(options.extra_directives)
        for field, value, what in (("qos", options.qos, "a quality of service"),
                                   ("architecture_constraint", options.constraint, "node features"),
                                   ("request_specific_nodes", options.nodelist, "a node list"),
                                   ("node_exclusive", options.exclusive, "exclusive nodes"),
                                   ("memory_per_gpu", options.mem_per_gpu_mb, "memory per GPU"),
                                   ("memory_whole_node", options.mem_whole_node, "'all the memory of the node'"),
                                   ("placement", options.placement if options.placement != "free" else None,
                                    "a placement (the parallel environment's allocation rule places the slots)")):
            if value:
                cannot(problems, field, "Grid Engine", what + " portably", value,
                       "sites define their own resources: use them in extra_directives ('-l NAME=VALUE')")
        refuse(problems)
        return [line for line in lines if line], warnings

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        return job_name(script_text, script_path, extra_args)

    def test_only(self, script, extra_args=()):
        """qsub -w v checks the job against the cluster's configuration and submits nothing."""
        argv = submit_argv(script, extra_args, verify=True)
        rc, out, err = self.runner.run(argv, check=False)
        words = " ".join((out + "\n" + err).split())
        if rc != 0 and "verification: found" not in words:   # some versions exit 1 after a good verification
            raise SubmitError("qsub -w v failed (rc %d): %s" % (rc, words or "no message"), cmd=argv, rc=rc,
                              stdout=out, stderr=err)
        return words

    def submit(self, script, extra_args=(), digest=None):
        _rc, out, _err = self.runner.run(submit_argv(script, extra_args, digest))
        return parse_job_id(out)

    def find_active(self, name, digest):
        """qstat -j <name> shows every queued or running job of that name, whoever owns it, with its context: a job
        is the same only with our key, our user, our job name and our script (as the Slurm side checks)."""
        rc, out, _err = self.runner.run(show_argv(name), check=False)
        if rc != 0:
            return None
        for fields in parse_fields(out):
            if ("%s=%s" % (CONTEXT, digest) in fields.get("context", "").split(",")
                    and owned_by_us(fields, name, self.script_path)):
                return fields.get("job_number")
        return None

    def check(self, script_text, extra_args=()):
        check_context(script_text, extra_args)

    def status(self, job_id):
        rc, out, err = self.runner.run(show_argv(job_id), check=False)
        if rc == 0 and out.strip():
            fields = (parse_fields(out) or [{}])[0]
            _rc, listing, _err = self.runner.run(list_argv())
            letters = list_states(listing).get(str(job_id), "qw")
            name = fields.get("job_name")
            folder = fields.get("cwd") or fields.get("sge_o_home") or ""
            stdout = _paths(fields.get("stdout_path_list"), job_id, name, folder)
            stderr = stdout if fields.get("merge") == "y" else _paths(fields.get("stderr_path_list"), job_id, name,
                                                                      folder, "e")
            return JobStatus(job_id=str(job_id), state=state_word(letters), active=True, name=name,
                             stdout_path=stdout, stderr_path=stderr, comment=fields.get("context"), raw=fields)
        if "do not exist" not in (err + out) and "not exist" not in (err + out):
            raise SubmitError("qstat failed (rc %d): %s" % (rc, (err or out).strip()), cmd=show_argv(job_id),
                              rc=rc, stdout=out, stderr=err)
        return self._finished(job_id)

    def _finished(self, job_id):
        for attempt in range(self.accounting_tries):
            rc, out, _err = self.runner.run(accounting_argv(job_id), check=False)
            records = [f for f in parse_fields(out) if f.get("jobnumber") == str(job_id)] if rc == 0 else []
            if records:
                # one record per task of an array: the array ended well only when every task did
                fields = records[whole_index([ended(f)[0] for f in records])]
                state, code = ended(fields)
                # the accounting file keeps no output path: Grid Engine's own name in the folder the job was
                # submitted from (modak's scripts say -cwd), where it is there
                name = fields.get("jobname")
                stdout = _paths(None, job_id, name, self.chdir or "")
                task = fields.get("taskid", "undefined")
                if stdout and task.isdigit():
                    stdout += "." + task            # an array task's own file (qsub(1), -t)
                stdout = stdout if stdout and os.path.isfile(stdout) else None
                return JobStatus(job_id=str(job_id), state=state, active=False, exit_code=code,
                                 elapsed=elapsed_seconds(fields.get("ru_wallclock", "").split(".")[0].rstrip("s")),
                                 name=name, stdout_path=stdout, raw=fields)
            if attempt + 1 < self.accounting_tries:
                time.sleep(self.accounting_pause)
        raise SubmitError("Grid Engine knows no job %s (not in qstat, nor in the accounting file)" % job_id)

    def cancel(self, job_id):
        self.runner.run(cancel_argv(job_id))
