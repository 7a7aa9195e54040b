# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local backend: a plain bash script that redirects its own output and enforces the wall time."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import JobStatus


def _target(name):
    """A redirection target; a name starting with a digit gets './' so that it cannot read as a descriptor."""
    return shell.quote("./" + name if name[:1].isdigit() else name)


def _signal_at(wall, lead_s):
    """The second of a run at which the program gets job.resilience's signal: ``lead_s`` before the wall time, and
    not before the first second."""
    return wall - min(lead_s or 0, wall - 1)


# -- submission: bash in the background, in its own session; the job id is the process id --------------------------
STATE_DIR = ".modak"
# fixed text; values arrive as positional parameters: $0 script, $1 state directory, $2 output prefix.
# $$ is this bash's pid, which is the job id (the process leads its own session: start_new_session).
# MODAK_JOB_STATE: the job's files in the state directory, without their suffix (a resilient job's restart count)
WRAPPER = ('MODAK_JOB_STATE="$1/$$" bash "$0" >"$2.o$$" 2>"$2.e$$" </dev/null; rc=$?; '
           'printf "%s\\n" "$rc" >"$1/$$.rc.tmp" && mv -f "$1/$$.rc.tmp" "$1/$$.rc"')


# a modak local script redirects its own output: exec >job.out 2>&1 (or 2>job.err)
_REDIRECT = re.compile(r"^exec >(\S+) 2>(&1|\S+)$", re.M)


def declared_outputs(script):
    """The files a local script sends its output to (relative to its directory), or (None, None)."""
    try:
        with open(script) as handle:
            match = _REDIRECT.search(handle.read(65536))
    except (IOError, OSError, UnicodeDecodeError):
        return None, None
    if not match:
        return None, None
    try:
        out = shlex.split(match.group(1))[0]
        err = out if match.group(2) == "&1" else shlex.split(match.group(2))[0]
    except (ValueError, IndexError):
        return None, None
    return out, err


def submit_argv(script, state_dir, prefix):
    """Started in a new session (setsid), in the background, with stdin from /dev/null."""
    return ["bash", "-c", WRAPPER, script, state_dir, prefix]


def syntax_argv(script):
    return ["bash", "-n", script]


def _proc_stat(pid):
    """The fields of /proc/<pid>/stat after the command name (state first); None when there is no such process."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _session_groups(session):
    """The process groups of the processes still in the job's ``session`` (proc(5): pgrp and session, fields 5
    and 6). A session id names its leader's pid, and no new session can take it while one of these runs."""
    groups = set()
    for name in os.listdir("/proc"):
        fields = _proc_stat(int(name)) if name.isdigit() else None
        if fields and len(fields) > 3 and fields[0] != "Z" and fields[3] == str(session):
            groups.add(int(fields[2]))
    return sorted(groups)


def start_time(pid):
    """When the process ``pid`` started (clock ticks after boot, proc(5) field 22), as text; '' when it is gone.
    A pid with another start time is another process: the pid was reused (as psutil and systemd tell them apart)."""
    fields = _proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else ""


def _alive(pid, started=None):
    """True when ``pid`` runs (not a zombie) and, with ``started`` (start_time at submission), is still the same
    process; without a recorded start time a process is never taken for the job."""
    fields = _proc_stat(pid)
    if not fields or fields[0] == "Z":
        return False
    return started is not None and len(fields) > 19 and fields[19] == started


class Local(Scheduler):
    """The script runs with bash in its own session in the background; the job id is the process id.

    Files in ``<chdir>/.modak/``: ``<id>.pid`` (the id, the name, the declared outputs and the process's start
    time, so that a reused pid is never taken for the job), ``<id>.rc`` (written when the script ends),
    ``<id>.cancelled``
    (written by a cancel); output goes to ``<chdir>/<name>.o<id>`` and ``<chdir>/<name>.e<id>``.
    """

    name = "local"
    prefix = None                       # no directive: a script nobody claims is run as it is
    extension = ".sh"
    default_launcher = "mpirun"

    def directives(self, options, settings):
        warnings = []
        ignored = [name for name, value in (
            ("queue", options.queue), ("account", options.account), ("qos", options.qos),
            ("job_array", options.array), ("job_dependency", options.dependency),
            ("memory_limit", options.mem_mb), ("request_event_notification", options.mail_events),
            ("extra_directives", options.extra_directives)) if value]
        if settings.nodes > 1:
            ignored.append("node_count")
        if ignored:
            warnings.append("a local run has no scheduler: %s ignored" % ", ".join(ignored))
        return [], warnings

    def preamble(self, options, settings):
        _lines, warnings = self.directives(options, settings)
        return ["# modak: local run of job %s" % options.job_name], warnings

    # job.resilience: no queue puts a local job back, so the job's script runs the program again (resilience.py);
    # the lead-time signal comes from the script's own timeout(1)
    reruns_itself = True

    def run_prefix(self, options, signal=None, lead_s=None):
        """timeout(1) enforces the wall time: TERM at the limit, KILL 30 s later. With job.resilience, the program's
        ``signal`` comes ``lead_s`` before the limit and KILL at it, and the program's own exit status is kept
        (``--preserve-status``: a run that ends well as the signal comes is not taken for one stopped by it).
        timeout signals its process group: every process of the launch."""
        wall = options.walltime_s
        if not wall:
            return []
        if signal:
            at = _signal_at(wall, lead_s)
            return ["timeout", "--preserve-status", "--signal=%s" % signal, "--kill-after=%d" % max(wall - at, 1),
                    "%ds" % at]
        return ["timeout", "--signal=TERM", "--kill-after=30", "%ds" % wall]

    @staticmethod
    def restart_record_lines(variable):
        """The restart count, written aside and renamed into the job's state files (``status`` reads it)."""
        return ['[ -z "${MODAK_JOB_STATE:-}" ] || { echo "$%s" >"$MODAK_JOB_STATE.restarts.tmp" '
                '&& mv -f "$MODAK_JOB_STATE.restarts.tmp" "$MODAK_JOB_STATE.restarts"; }' % variable]

    def limit_lines(self, options, lead_s):
        """A run still going when timeout(1) sent the signal ran that long (the script's SECONDS counts each run
        from zero): the limit stopped it, though the batch shell saw no signal."""
        if not options.walltime_s:
            return []
        return ['[ -n "$MODAK_STOP" ] || [ "$SECONDS" -lt %d ] || MODAK_STOP=limit'
                % _signal_at(options.walltime_s, lead_s)]

    def redirect_lines(self, options):
        if not options.stdout:
            # no file named: the output stays with whoever runs the script (batch_job writes <name>.o<pid>,
            # unique per run); standard error joins it unless a file is named for it
            return ["exec 2>%s" % _target(options.stderr) if options.stderr else "exec 2>&1"]
        if options.stderr:
            return ["exec >%s 2>%s" % (_target(options.stdout), _target(options.stderr))]
        return ["exec >%s 2>&1" % _target(options.stdout)]

    def __init__(self, runner=None, chdir=None, script=None, job_name=None):
        super(Local, self).__init__(runner, chdir, script, job_name or "job")
        self.state_dir = os.path.join(chdir, STATE_DIR) if chdir else None   # None: only the script is written

    @classmethod
    def claims(cls, text):
        return False

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        base = os.path.basename(script_path)
        return base.rsplit(".", 1)[0] if "." in base[1:] else base

    @classmethod
    def state_files(cls, job_id):
        return ["%s.%s" % (job_id, suffix) for suffix in ("pid", "rc", "cancelled")]

    def _file(self, job_id, suffix):
        return os.path.join(self.state_dir, "%s.%s" % (job_id, suffix))

    def test_only(self, script, extra_args=()):
        self.runner.run(syntax_argv(script))
        return "bash -n %s: syntax ok" % script

    def submit(self, script, extra_args=(), digest=None):
        name = self.job_name
        if extra_args:
            raise SubmitError("the local scheduler takes no extra_args")
        os.makedirs(self.state_dir, exist_ok=True)
        argv = submit_argv(script, self.state_dir, os.path.join(self.chdir, name))
        self.runner.record(argv)
        try:
            with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as sink:
                proc = subprocess.Popen(argv, cwd=self.chdir, stdin=stdin, stdout=sink, stderr=sink,
                                        start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SubmitError("cannot start bash: %s" % exc, cmd=argv)
        job_id = str(proc.pid)
        out, err = declared_outputs(script)
        with open(self._file(job_id, "pid"), "w") as handle:   # the start time tells a reused pid apart
            handle.write("%s\n%s\n%s\n%s\n%s\n" % (job_id, name, out or "", err or "", start_time(proc.pid)))
        return job_id

    def _started(self, job_id):
        """The start time recorded at submission (None for a record without one: never taken for the job)."""
        with open(self._file(job_id, "pid")) as handle:
            lines = handle.read().splitlines()
        return lines[4] if len(lines) > 4 and lines[4] else None

    def cancel(self, job_id):
        if not str(job_id).isdigit() or not os.path.exists(self._file(job_id, "pid")):
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir))
        pid = int(job_id)
        self.runner.record(["kill", "-TERM", "--", "-%d" % pid])
        open(self._file(job_id, "cancelled"), "w").close()
        if not _alive(pid, self._started(job_id)):  # a reused pid is another user's process group: not signalled
            return
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            return
        # timeout(1) runs the launch in a process group of its own, in the job's session. A script with a
        # forwarding trap (job.resilience) stays until the program has stopped; a script without one dies at once and
        # leaves that group running: once the script is gone, every group still in its session is signalled.
        deadline = time.monotonic() + 2
        while _alive(pid, self._started(job_id)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not _alive(pid, self._started(job_id)):
            for group in _session_groups(pid):
                try:
                    os.killpg(group, signal.SIGTERM)
                except OSError:
                    pass

    def status(self, job_id):
        if not str(job_id).isdigit() or not os.path.exists(self._file(job_id, "pid")):
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir))
        with open(self._file(job_id, "pid")) as handle:
            lines = handle.read().splitlines()
        name = lines[1] if len(lines) > 1 else self.job_name
        stdout = os.path.join(self.chdir, "%s.o%s" % (name, job_id))
        stderr = os.path.join(self.chdir, "%s.e%s" % (name, job_id))
        if len(lines) > 3 and lines[2]:  # the script redirects its own output (a modak local script)
            stdout = os.path.join(self.chdir, lines[2])
            stderr = os.path.join(self.chdir, lines[3] or lines[2])
        started = os.path.getmtime(self._file(job_id, "pid"))
        rc_file = self._file(job_id, "rc")
        cancelled = os.path.exists(self._file(job_id, "cancelled"))
        if _alive(int(job_id), lines[4] if len(lines) > 4 and lines[4] else None) and not os.path.exists(rc_file):
            return JobStatus(job_id=job_id, state="RUNNING", active=True, stdout_path=stdout, stderr_path=stderr,
                             elapsed=int(time.time() - started), name=name, **self._restart_fields(job_id))
        code = None
        if os.path.exists(rc_file):
            with open(rc_file) as handle:
                text = handle.read().strip()
            code = int(text) if text.lstrip("-").isdigit() else None
            ended = os.path.getmtime(rc_file)
        else:
            ended = time.time()
        if cancelled and (code is None or code != 0):
            state = "CANCELLED"
        elif code == 0:
            state = "COMPLETED"
        elif code == 124:
            state = "TIMEOUT"             # the local backend wraps the program in timeout(1)
        else:
            state = "FAILED"
        return JobStatus(job_id=job_id, state=state, active=False, exit_code=code, stdout_path=stdout,
                         stderr_path=stderr, elapsed=int(ended - started), name=name, **self._restart_fields(job_id))

    def _restart_fields(self, job_id):
        """The restart count a resilient local job recorded, and where it comes from (none recorded: nothing)."""
        path = self._file(job_id, "restarts")
        try:
            with open(path) as handle:
                text = handle.read().strip()
        except OSError:
            return {}
        return {"restarts": int(text), "restarts_from": "the job's own count (%s)" % path} if text.isdigit() else {}
