# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What PBS Pro and Torque share: the #PBS prefix and the directives both spell the same way."""

from __future__ import annotations

import os
import re

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import (
    Scheduler, opt, pbs_begin, pbs_events, pbs_job_name)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import (
    JobStatus, directive_words, elapsed_seconds, option_value)


# -- raw options both dialects allow in extra_directives, and those with a typed field -------------------------------
# qsub's -o, -e, -d, -w name files or directories, -u and -P (Torque) change the user, -S and -C the interpreter
# and the directive prefix, -W stagein/stageout copy files: none is listed. -l takes each dialect's own list of
# resources (qsub applies every name=value of its comma list: each is checked), none that names a file or a
# program (Torque's prologue and epilogue), none that a typed field writes (walltime, select, nodes, mem...).
COMMON_OPTIONS = dict.fromkeys(("-p", "-r", "-h"))
# job-wide resources that are limits or labels, in both dialects' pbs_resources
COMMON_RESOURCES = ("software", "cput", "pcput", "pmem", "pvmem", "vmem", "file", "nice")
TYPED_OPTIONS = {"-N": "job_name", "-q": "queue", "-A": "account", "-a": "defer_job",
                 "-m": "request_event_notification", "-M": "email_address", "-V": "copy_environment",
                 "-v": "copy_environment_variable", "-o": "standard_output_file", "-e": "standard_error_file",
                 "-j": "combine_stdout_stderr", "-J": "job_array", "-t": "job_array", "-n": "node_exclusive"}


# -- submission: qsub, qstat -f, qdel -------------------------------------------------------------------------------

# one-letter job states of qstat(1B) (PBS Pro, "Job States"; Torque's qstat(1) adds C) -> words; finished jobs
# (C, F) are told apart by their exit status
STATES = {"Q": "QUEUED", "R": "RUNNING", "H": "HELD", "W": "WAITING", "T": "TRANSIT", "E": "EXITING",
          "S": "SUSPENDED", "B": "BEGUN", "U": "SUSPENDED", "X": "FINISHED", "M": "MOVED"}
ACTIVE_LETTERS = frozenset("QRHWTESBU")


def submit_argv(script, extra_args=()):
    return ["qsub"] + list(extra_args) + [script]


def status_argv(job_id):
    return ["qstat", "-f", str(job_id)]


def cancel_argv(job_id):
    return ["qdel", str(job_id)]


def job_name(script_text, script_path, extra_args=()):
    for words in (list(extra_args), directive_words(script_text, "#PBS")):
        name = option_value(words, (), ("-N",))
        if name:
            return name
    return None


def parse_qstat(text):
    """`qstat -f` -> dict; continuation lines (tab-indented, no '=') are joined to the previous value."""
    fields = {}
    last = None
    for line in text.splitlines():
        if line.startswith("Job Id:"):
            fields["Job Id"] = line.split(":", 1)[1].strip()
            continue
        key, sep, value = line.strip().partition(" = ")
        if sep:
            last = key.strip()
            fields[last] = value.strip()
        elif last and line.strip():
            fields[last] += line.strip()
    return fields


def _path(value):
    """'host:/path' -> '/path'."""
    if not value:
        return None
    return value.split(":", 1)[1] if re.match(r"^[^/:]+:/", value) else value


class PbsFamily(Scheduler):
    """What PBS Pro and Torque share: the #PBS directives both spell the same way; qsub, qstat -f, qdel. A dialect
    gives its name, its resource and array lines, and status_argv."""

    prefix = "#PBS"
    extension = ".pbs"
    submit_dir_var = "PBS_O_WORKDIR"
    default_launcher = "mpirun"
    ping_argv = ("qstat", "-B")            # qstat(1B): the server's status, an error when it does not answer
    host_file = "PBS_NODEFILE"
    resilience_options = ("-r",)

    def resilience_directives(self, res):
        """-r y: the job is rerunnable, so the server requeues it after a preemption (PBS Pro's preempt_order 'R')
        or when its node goes down (qsub(1B)). The job gets TERM at its wall time, kill_delay before KILL; it
        cannot requeue itself (qrerun is the operator's)."""
        return ["-r y"]
    status_argv = staticmethod(status_argv)
    typed_options = TYPED_OPTIONS

    def dependency_lines(self, dependency, problems):
        return [opt("-W depend={0}", ",".join(dependency) if dependency else None)]

    @staticmethod
    def name_line(options):
        return "-N %s" % pbs_job_name(options.job_name)

    def common_lines(self, options):
        """Queue, account, dependency, start time, mail, environment and output: the same in both."""
        return [
            opt("-q {0}", options.queue),
            opt("-A {0}", options.account),
        ] + self.dependency_lines(options.dependency, []) + [
            opt("-a {0}", pbs_begin(options.begin) if options.begin else None),
            opt("-m {0}", pbs_events(options.mail_events) if options.mail_events else None),
            opt("-M {0}", options.mail_user if options.mail_events else None),
            "-V" if options.export_all else "",
            opt("-v {0}", options.export_vars),
            opt("-o {0}", options.stdout),  # none named: PBS's <name>.o<id> (one per array index)
            "-e %s" % options.stderr if options.stderr else "-j oe",
        ]

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        return job_name(script_text, script_path, extra_args) or os.path.basename(script_path)

    def submit(self, script, extra_args=(), digest=None):
        _rc, out, _err = self.runner.run(submit_argv(script, extra_args))
        job_id = out.strip().splitlines()[0].strip() if out.strip() else ""
        if not job_id:
            raise SubmitError("qsub printed no job id")
        return job_id

    def status(self, job_id):
        argv = self.status_argv(job_id)
        rc, out, err = self.runner.run(argv, check=False)
        if rc != 0 or not out.strip():
            raise SubmitError("qstat failed (rc %d): %s" % (rc, (err or out).strip() or "no such job"), cmd=argv,
                              rc=rc, stdout=out, stderr=err)
        fields = parse_qstat(out)
        letter = fields.get("job_state", "U")[:1]
        code = None
        for key in ("exit_status", "Exit_status"):
            if fields.get(key, "").lstrip("-").isdigit():
                code = int(fields[key])
        if letter in ACTIVE_LETTERS:
            state, active = STATES.get(letter, letter), True
        else:
            active = False
            if code is None or code == 0:
                state = "COMPLETED"
            elif code in (271, 143) or code == -1 * 15:
                state = "CANCELLED"           # killed by SIGTERM (qdel)
            elif code == -11 or code == -29:
                state = "TIMEOUT"             # JOB_EXEC_KILL_WALLTIME (PBS Pro) / overlimit (Torque)
            else:
                state = "FAILED"
        stdout, stderr = self._outputs(fields, job_id, self.script_path, self.job_name)
        elapsed = elapsed_seconds(fields.get("resources_used.walltime"))
        return JobStatus(job_id=str(job_id), state=state, active=active, exit_code=None if active else code,
                         stdout_path=stdout, stderr_path=stderr, elapsed=elapsed, name=fields.get("Job_Name"),
                         raw=fields)

    def _outputs(self, fields, job_id, script_path, job_name_hint):
        """Output_Path/Error_Path when qstat tells; else the first existing default name <name>.o<seq>."""
        out, err = _path(fields.get("Output_Path")), _path(fields.get("Error_Path"))
        if fields.get("Join_Path", "n") in ("oe", "true", "True"):
            err = err or out
        if out:
            return out, err
        seq = str(job_id).split(".", maxsplit=1)[0]
        folder = os.path.dirname(script_path) if script_path else os.getcwd()
        folder = self.runner.cwd or folder
        names = [n for n in (fields.get("Job_Name"), job_name_hint,
                             os.path.basename(script_path) if script_path else None) if n]
        for name in names:
            candidate = os.path.join(folder, "%s.o%s" % (name, seq))
            if os.path.exists(candidate):
                error = os.path.join(folder, "%s.e%s" % (name, seq))
                return candidate, error if os.path.exists(error) else None
        return None, None

    def cancel(self, job_id):
        self.runner.run(cancel_argv(job_id))
