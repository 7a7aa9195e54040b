# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local: the script runs with bash in its own session in the background.

The job id is the process id. Files in ``<chdir>/.modak/``: ``<id>.pid``, ``<id>.rc`` (written when
the script ends), ``<id>.cancelled`` (written by a cancel); output goes to ``<chdir>/<name>.o<id>`` and
``<chdir>/<name>.e<id>``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time

from ansible_collections.sodalite.modak.plugins.module_utils.submit.runner import JobStatus, SubmitError

STATE_DIR = ".modak"
# fixed text; values arrive as positional parameters: $0 script, $1 state directory, $2 output prefix.
# $$ is this bash's pid, which is the job id (the process leads its own session: start_new_session).
WRAPPER = ('bash "$0" >"$2.o$$" 2>"$2.e$$" </dev/null; rc=$?; '
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


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class Local(object):
    name = "local"

    def __init__(self, runner, chdir, name="job"):
        self.runner = runner
        self.chdir = chdir
        self.job_name = name
        self.state_dir = os.path.join(chdir, STATE_DIR)

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
        self.runner.history.append(argv)
        try:
            with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as sink:
                proc = subprocess.Popen(argv, cwd=self.chdir, stdin=stdin, stdout=sink, stderr=sink,
                                        start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SubmitError("cannot start bash: %s" % exc, cmd=argv)
        job_id = str(proc.pid)
        out, err = declared_outputs(script)
        with open(self._file(job_id, "pid"), "w") as handle:
            handle.write("%s\n%s\n%s\n%s\n" % (job_id, name, out or "", err or ""))
        return job_id

    def cancel(self, job_id):
        if not str(job_id).isdigit() or not os.path.exists(self._file(job_id, "pid")):
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir))
        pid = int(job_id)
        self.runner.history.append(["kill", "-TERM", "--", "-%d" % pid])
        open(self._file(job_id, "cancelled"), "w").close()
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGTERM)
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
        if _alive(int(job_id)) and not os.path.exists(rc_file):
            return JobStatus(job_id=job_id, state="RUNNING", active=True, stdout_path=stdout, stderr_path=stderr,
                             elapsed=int(time.time() - started), name=name)
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
                         stderr_path=stderr, elapsed=int(ended - started), name=name)
