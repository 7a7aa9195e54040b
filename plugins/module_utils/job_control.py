# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Submit, follow and cancel one batch job: what the batch_job module does, without Ansible.

The scheduler's class (schedulers/<name>.py, found through schedulers/registry.py) builds the argv and
parses the answers; a Runner (commands.py) runs the argv with a timeout in the C locale.
A small ledger ``<chdir>/.modak/jobs.json`` remembers name -> (job id, content hash) so that
PBS and local jobs, which carry no comment, are recognised on the next run too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import re
import time
from dataclasses import dataclass, field
from typing import List, Optional

from ansible_collections.sodalite.modak.plugins.module_utils import ledger, path_trust, tail
from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner
from ansible_collections.sodalite.modak.plugins.module_utils.errors import (
    OutputError, SchedulerTimeout, SubmitError)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.local import STATE_DIR
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import digest

SCHEDULERS = registry.NAMES
LEDGER = "jobs.json"
# the shortest wait between two status queries: poll_interval 0 must not hammer the controller
# (sbatch --wait itself starts at 2 s; Ansible's wait_for sleeps 1 s)
POLL_FLOOR_S = 1.0
# a wait asks again when a status query gets no answer (a controller restarting, a slow reply), the pause doubling
# from POLL_FLOOR_S, for at most this long in a row; only then does the wait fail, naming the job
STATUS_RETRY_S = 180
# state=query returns this many last lines of the job's output file (read with tail.last_lines: bounded)
OUTPUT_TAIL_LINES = 3
# a failed job's message ends with this many last lines of its error output (else its output)
FAILURE_TAIL_LINES = 5
# what a scheduler says when it has nothing to say (Slurm's Reason=None, StartTime=Unknown)
_NOTHING = frozenset(("", "None", "(null)", "Unknown", "N/A", "n/a"))


def why(status):
    """{reason, expected_start} of a job from the scheduler's own fields (Slurm's Reason and, while it is pending,
    StartTime, as ``scontrol show job`` gives them); None where the scheduler says nothing."""
    raw = status.raw or {}
    reason = raw.get("Reason")
    start = raw.get("StartTime") if status.state == "PENDING" else None
    return {"reason": None if reason in _NOTHING else reason, "expected_start": None if start in _NOTHING else start}


_REQUEUED_STATES = frozenset(("PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"))


def poll_of(result, waited=None):
    """What one status query said, as a job's history keeps it (batch_job's ``polls``)."""
    return {"state": result.get("state"), "elapsed": result.get("elapsed"), "waited": None if waited is None
            else int(waited), "reason": result.get("reason"), "exit_code": result.get("exit_code"),
            "restarts": result.get("restarts"), "nodes": result.get("nodes")}


def segments_of(polls, restarts_from=None):
    """The job's runs between requeues, read from successive polls: a run ends where the restart count grows
    (the scheduler requeued the job: its state then, REQUEUED or PENDING, and why) and the last one where the job
    ended. Each: {restart, nodes (the last seen), state, reason, exit_code, from}. A run whose requeue was not seen
    (the job requeued and started again between two polls) ends REQUEUED, and the runs not seen at all are missing:
    the restart numbers then jump; without a restart count there is one run."""
    segments, current = [], None
    for poll in polls:
        count = poll.get("restarts") or 0
        if current is not None and count > current["restart"]:
            if poll.get("state") in _REQUEUED_STATES:
                current.update(state=poll.get("state"), reason=poll.get("reason"))
            else:                    # requeued and started again between two polls: seen as the count grew
                current.update(state="REQUEUED", reason=None)
            segments.append(current)
            current = None
        if current is None:
            current = {"restart": count, "nodes": None, "state": None, "reason": None, "exit_code": None,
                       "from": restarts_from}
        current["nodes"] = poll.get("nodes") or current["nodes"]
        current.update(state=poll.get("state"), reason=poll.get("reason"), exit_code=poll.get("exit_code"))
    if current is not None:
        segments.append(current)
    return segments


# a job id as the schedulers give them (Slurm 123, 123_4, 123+0; PBS 123.server, 123[].server; Grid Engine 123.1;
# Flux f2a3b or ƒ2a3b; local, a pid): never an option (a leading '-' would reach scancel or qdel as one)
JOB_ID = re.compile(r"\A[0-9A-Za-z\u0192][0-9A-Za-z\u0192._+\[\]@:-]{0,127}\Z")


@dataclass
class Request:
    script: Optional[str] = None
    scheduler: Optional[str] = None
    state: str = "submitted"
    job_id: Optional[str] = None
    wait: bool = False
    wait_timeout: int = 3600
    poll_interval: float = 5
    chdir: Optional[str] = None
    extra_args: List[str] = field(default_factory=list)
    after: List[dict] = field(default_factory=list)   # [{job_id, kind: ok|any|notok}]: start after those jobs
    force: bool = False
    rerun: bool = True
    fail_on_job_error: bool = True
    command_timeout: int = 30
    check_mode: bool = False


def owner_uid(raw):
    """The uid of a job's user from what its scheduler said (Slurm's UserId=name(uid), PBS's Job_Owner=name@host,
    Grid Engine's owner; a local job's uid), or None."""
    if isinstance(raw.get("uid"), int):
        return raw["uid"]
    user = raw.get("UserId") or ""
    if user.endswith(")") and user.partition("(")[2][:-1].isdigit():
        return int(user.partition("(")[2][:-1])
    name = (raw.get("Job_Owner") or raw.get("owner") or "").split("@")[0]
    try:
        return pwd.getpwnam(name).pw_uid if name else None
    except KeyError:
        return None


def outputs_of_its_user(status):
    """``status`` without the output files root must not read for it: a scheduler names whatever file a job asked
    for (another user's job with StdOut=/etc/shadow), and root may read any. As root, an output file is kept only
    when it is the job's user's (or not there yet: nothing to read, and a link is never followed later)."""
    if os.geteuid() != 0:
        return status               # the user reads what the user may read
    owner = owner_uid(status.raw or {})   # None (no user named, or named twice): nothing is root's to read
    dropped = {}
    for name in ("stdout_path", "stderr_path"):
        path = getattr(status, name)
        try:
            uid = os.lstat(path).st_uid if path else None
        except OSError:
            uid = None
        if uid is not None and uid != owner:
            dropped[name] = None
    return dataclasses.replace(status, **dropped) if dropped else status


class JobFailed(SubmitError):
    """The job ended badly (or a wait ran out); the result is attached."""

    def __init__(self, message, result):
        super(JobFailed, self).__init__(message, cmd=result.get("cmd"))
        self.result = result


def _read(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        raise SubmitError("cannot read the job script %s: %s" % (path, exc.strerror or exc))
    except UnicodeDecodeError:
        raise SubmitError("the job script %s is not UTF-8 text" % path)


class Job(object):
    """One run of the module: the request, its backend, and the result being built."""

    clock = time     # what ``follow`` reads the time from and sleeps with (tests give a clock of their own)
    report = None    # called with each status ``follow`` reads (the modak command prints a line per poll)

    def __init__(self, req, runner=None):
        self.req = req
        try:
            self.text = _read(req.script) if req.script else ""
        except SubmitError:
            if req.state != "query":
                raise
            self.text = ""     # a poll of a job whose script is gone or unreadable: the scheduler still knows it
        if req.scheduler:
            self.scheduler = req.scheduler
        elif req.script:
            self.scheduler = registry.detect(self.text)
        else:
            raise SubmitError("scheduler is required when no script is given")
        if self.scheduler not in SCHEDULERS:
            raise SubmitError("unknown scheduler %r (known: %s)" % (self.scheduler, ", ".join(SCHEDULERS)))
        for given in [req.job_id] + [dep.get("job_id") for dep in req.after if isinstance(dep, dict)]:
            if given is not None and not JOB_ID.match(str(given)):
                raise SubmitError("job id %r is not one a scheduler gives (letters and digits first, then also . _ "
                                  "+ - [ ] @ :): it is never passed to a command" % (given,))
        self.chdir = req.chdir or (os.path.dirname(os.path.abspath(req.script)) if req.script else os.getcwd())
        if not os.path.isdir(self.chdir):
            raise SubmitError("chdir %s is not a directory" % self.chdir)
        if runner is None:
            runner = ProcessRunner(timeout=req.command_timeout)
        runner.cwd, runner.error, runner.timeout_error = self.chdir, SubmitError, SchedulerTimeout
        self.runner = runner
        script = os.path.abspath(req.script) if req.script else None
        scheduler = registry.scheduler_class(self.scheduler)
        # the submission's arguments: the typed dependencies in the scheduler's words, then the extra arguments
        for dep in req.after:
            if not isinstance(dep, dict) or not isinstance(dep.get("job_id"), str):
                raise SubmitError("after: each item names a job_id (a string): %r" % (dep,))
        self.args = scheduler.after_args([(dep["job_id"], dep.get("kind") or "ok") for dep in req.after]) \
            + list(req.extra_args)
        self.digest = digest(self.text, self.args) if req.script else None
        self.name = scheduler.name_of(self.text, script, self.args) if script else None
        self.backend = scheduler(self.runner, chdir=self.chdir, script=script, job_name=self.name)
        self.script = script
        self.result = {"changed": False, "job_id": None, "state": None, "active": None, "exit_code": None,
                       "reason": None, "expected_start": None,
                       "stdout_path": None, "stderr_path": None, "elapsed": None, "cmd": [],
                       "scheduler": self.scheduler, "job_name": self.name, "chdir": self.chdir,
                       "restarts": None, "restarts_from": None, "nodes": None, "state_files": []}
        self.history = []     # every status read, for the job's runs between requeues (segments_of)

    # -- the ledger ---------------------------------------------------------------------------------
    def _ledger_path(self):
        return os.path.join(self.chdir, STATE_DIR, LEDGER)

    def _ledger(self):
        try:
            return ledger.read(self._ledger_path())
        except OutputError as exc:
            raise SubmitError(str(exc))

    def _remember(self, job_id):
        ledger.record(self._ledger_path(), "%s/%s" % (self.scheduler, self.name),
                      {"job_id": job_id, "digest": self.digest, "script": self.script, "submitted": int(time.time())})

    def _trust_state_dir(self, create=False):
        """Refuse a state directory that others may change (ledger.check_directory), before anything is read from
        or written into it; ``create`` makes it (0700) when missing."""
        try:
            ledger.check_directory(os.path.join(self.chdir, STATE_DIR), create and not self.req.check_mode)
        except OutputError as exc:
            raise SubmitError(str(exc))

    @contextlib.contextmanager
    def _claim(self):
        """The ledger's lock, held from the 'already there?' check until the submission is recorded."""
        if self.req.check_mode:
            yield
            return
        try:
            with ledger.locked(self._ledger_path()):
                yield
        except OutputError as exc:          # the state directory refused (replaced since the check)
            raise SubmitError(str(exc))

    def _recorded(self):
        entry = self._ledger().get("%s/%s" % (self.scheduler, self.name))
        if entry and entry.get("digest") == self.digest:
            return str(entry.get("job_id"))
        return None

    # -- steps --------------------------------------------------------------------------------------
    def _status(self, job_id):
        status = outputs_of_its_user(self.backend.status(job_id))
        self.result.update(job_id=status.job_id, state=status.state, active=status.active, exit_code=status.exit_code,
                           stdout_path=status.stdout_path, stderr_path=status.stderr_path, elapsed=status.elapsed,
                           restarts=status.restarts, restarts_from=status.restarts_from, nodes=status.nodes)
        self.result.update(why(status))
        self.result["state_files"] = self._state_files(status.job_id)
        self.history.append(poll_of(self.result))
        return status

    def _state_files(self, job_id):
        """The names of the files batch_job keeps in ``<chdir>/.modak`` that this job's submission and queries
        wrote and that are there (its ledger and lock, the backend's files of the job): what a TOSCA create records
        as modak's, so that its delete removes them and nothing else."""
        names = [LEDGER, LEDGER + ".lock"] + list(self.backend.state_files(job_id))
        try:
            return ledger.present(os.path.join(self.chdir, STATE_DIR), names)
        except OutputError as exc:
            raise SubmitError(str(exc))

    def existing(self):
        """The job id of the same job (name and content) that must not be submitted again, or None."""
        if self.req.force:
            return None
        found = self.backend.find_active(self.name, self.digest)
        if found:
            return found
        recorded = self._recorded()
        if recorded:
            try:
                status = self.backend.status(recorded)
            except SubmitError:
                return None
            if status.active or not self.req.rerun:
                return recorded
        return None

    def follow(self, status):
        """Poll until the job leaves the queue, or fail when wait_timeout runs out. The pause starts at
        POLL_FLOOR_S and doubles up to poll_interval; a query the scheduler does not answer is asked again for
        STATUS_RETRY_S in a row before the wait fails."""
        clock = self.clock
        deadline = clock.time() + self.req.wait_timeout
        longest = max(POLL_FLOOR_S, self.req.poll_interval or 0)
        pause, failing_since = POLL_FLOOR_S, None
        while status.active:
            if clock.time() >= deadline:
                message = "job %s is still %s after wait_timeout=%s s" % (
                    status.job_id, status.state, self.req.wait_timeout)
                raise JobFailed(message, self.result)
            clock.sleep(min(pause, max(0.05, deadline - clock.time())))
            try:
                status = self._status(status.job_id)
            except SubmitError as exc:
                failing_since = clock.time() if failing_since is None else failing_since
                if clock.time() - failing_since >= STATUS_RETRY_S:
                    raise JobFailed("the state of job %s could not be read for %d s (%s); the job may still be "
                                    "running: follow it again with state=query job_id=%s"
                                    % (status.job_id, STATUS_RETRY_S, exc, status.job_id), self.result)
                self.result["status_errors"] = self.result.get("status_errors", 0) + 1
                pause = min(pause * 2, longest)
                continue
            failing_since = None
            pause = min(pause * 2, longest)
            if self.report is not None:
                self.report(status)
        self.result["segments"] = segments_of(self.history, self.result.get("restarts_from"))
        return status

    def submitted(self):
        if not self.script:
            raise SubmitError("script is required with state=submitted")
        # the scheduler reads the script by its path: nobody else may change it or swap it before then
        why = path_trust.others_may_swap(self.script)
        if why:
            raise SubmitError("refusing to submit %s: %s; use a directory of your own (docs/containers.md, trust "
                              "model; a group the site trusts is listed in MODAK_TRUSTED_GROUPS)" % (self.script, why))
        # the job makes files in its working directory and reopens them by name (its outputs, the container's
        # variables, a host file): nobody else may rename them there
        why = path_trust.others_may_rename_in(self.chdir)
        if why:
            raise SubmitError("refusing to submit %s from %s: %s; use a directory of your own (docs/containers.md, "
                              "trust model; a group the site trusts is listed in MODAK_TRUSTED_GROUPS)"
                              % (self.script, self.chdir, why))
        self._trust_state_dir(create=True)
        with self._claim():
            status = self._submit_once()
        if status is None:   # check mode
            return self.result
        if self.req.wait:
            status = self.follow(status)
        self._fail_if_ended_badly(status)
        return self.result

    def _fail_if_ended_badly(self, status):
        if not status.active and status.state != "COMPLETED" and self.req.fail_on_job_error:
            code = "" if status.exit_code is None else " with exit code %s" % status.exit_code
            reason = " (reason: %s)" % self.result["reason"] if self.result.get("reason") else ""
            lines = []
            for path in (status.stderr_path, status.stdout_path):
                lines = tail.last_lines(path, FAILURE_TAIL_LINES) if path else []
                if lines:
                    break
            output = "; its output ends: %s" % " | ".join(lines) if lines else ""
            raise JobFailed("job %s ended %s%s%s%s" % (status.job_id, status.state, code, reason, output), self.result)

    def query(self):
        """The state of job ``job_id`` and the last lines of its output; changes nothing, never submits."""
        if not self.req.job_id:
            raise SubmitError("job_id is required with state=query")
        self._trust_state_dir()
        status = self._status(self.req.job_id)
        self.result["stdout_tail"] = tail.last_lines(status.stdout_path, OUTPUT_TAIL_LINES)
        self.result["msg"] = "job %s is %s" % (status.job_id, status.state)
        self._fail_if_ended_badly(status)
        return self.result

    def watched(self):
        """The state of job ``job_id``, followed to its end with ``follow`` when ``wait`` (the backoff of a
        submission's wait); fails as ``query`` does when the job ended badly. The modak command's status."""
        if not self.req.job_id:
            raise SubmitError("job_id is required to follow a job")
        self._trust_state_dir()
        status = self._status(self.req.job_id)
        if self.req.wait:
            status = self.follow(status)
        self.result["msg"] = "job %s is %s" % (status.job_id, status.state)
        self._fail_if_ended_badly(status)
        return self.result

    def _submit_once(self):
        """Submit unless the same job is there; its status (None in check mode). Runs under the ledger's lock."""
        self.backend.check(self.text, self.args)
        found = self.existing()
        if found:
            status = self._status(found)
            self.result["msg"] = "job %s (same name and content) is %s: not submitted again" % (found, status.state)
        elif self.req.check_mode:
            if hasattr(self.backend, "test_only"):
                self.result["msg"] = self.backend.test_only(self.script, self.args)
            else:
                self.result["msg"] = "check mode: %s would be submitted (%s checks nothing without submitting)" % (
                    self.script, self.scheduler)
            self.result.update(changed=True, cmd=self.runner.last)
            return None
        else:
            job_id = self.backend.submit(self.script, self.args, self.digest)
            self.result.update(changed=True, cmd=self.runner.last)
            self._remember(job_id)
            status = self._status(job_id)
            self.result["msg"] = "job %s submitted" % job_id
        return status

    def absent(self):
        self._trust_state_dir()
        job_id = self.req.job_id
        if not job_id and self.script:
            job_id = self.backend.find_active(self.name, self.digest) or self._recorded()
        if not job_id:
            self.result["msg"] = "no job to cancel"
            return self.result
        status = self._status(job_id)
        if not status.active:
            self.result["msg"] = "job %s has already ended (%s)" % (job_id, status.state)
            return self.result
        self.result["changed"] = True
        if self.req.check_mode:
            self.result.update(msg="check mode: job %s would be cancelled" % job_id)
            return self.result
        self.backend.cancel(job_id)
        self.result["cmd"] = self.runner.last
        status = self._status(job_id)
        if self.req.wait:
            status = self.follow(status)
        self.result["msg"] = "job %s cancelled (%s)" % (job_id, status.state)
        return self.result

    def available(self):
        """Whether the scheduler answers (state=available); changes nothing, never submits."""
        try:
            answers, said = self.backend.answers()
        except SubmitError as exc:           # not installed here, or no answer within command_timeout
            answers, said = False, str(exc)
        verb = "answers" if answers else "does not answer"
        self.result.update(available=answers, msg="%s %s: %s" % (self.scheduler, verb, said))
        return self.result

    def execute(self):
        if self.req.state == "available":
            return self.available()
        if self.req.state == "absent":
            return self.absent()
        if self.req.state == "query":
            return self.query()
        return self.submitted()


def run(req, runner=None):
    """Run the request; returns the result dict or raises SubmitError / JobFailed.

    ``runner`` runs the commands (commands.ModuleRunner in a module, a fake in tests); by default a ProcessRunner.
    """
    return Job(req, runner).execute()
