# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One runner for every scheduler command: argv lists in, (rc, out, err) out, never a shell.

Backends build argv with pure functions (tests compare them exactly); the runner executes them
with a timeout so that a scheduler that does not answer gives a clear error instead of a hang.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional


class SubmitError(Exception):
    """A scheduler command failed or the job could not be handled; the message says why."""

    def __init__(self, message, cmd=None, rc=None, stdout="", stderr=""):
        super(SubmitError, self).__init__(message)
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr


class SchedulerTimeout(SubmitError):
    """A scheduler command did not answer within the timeout."""


@dataclass
class JobStatus:
    """What a scheduler says about one job."""
    job_id: str
    state: str                      # the scheduler's word: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED...
    active: bool                    # still queued or running
    exit_code: Optional[int] = None
    stdout_path: Optional[str] = None
    stderr_path: Optional[str] = None
    elapsed: Optional[int] = None   # seconds
    name: Optional[str] = None
    comment: Optional[str] = None
    raw: dict = field(default_factory=dict)


# Slurm words: what counts as still in the queue, and what counts as a good end
ACTIVE_STATES = frozenset(("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
                           "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
                           "QUEUED", "HELD", "EXITING", "WAITING", "TRANSIT", "BEGUN"))
GOOD_STATES = frozenset(("COMPLETED",))


def digest(script_text, extra_args=()):
    """The identity of a submission: sha256 over the script content and the extra arguments."""
    h = hashlib.sha256(script_text.encode("utf-8"))
    for arg in extra_args:
        h.update(b"\0" + arg.encode("utf-8"))
    return h.hexdigest()


def elapsed_seconds(text):
    """Slurm/PBS durations '[D-]HH:MM:SS', 'MM:SS' or 'SS' -> int seconds (None if not parseable)."""
    if text is None:
        return None
    match = re.match(r"^(?:(\d+)-)?(\d+(?::\d+){0,2})(?:\.\d+)?\Z", text.strip())
    if not match:
        return None
    seconds = 0
    for part in match.group(2).split(":"):
        seconds = seconds * 60 + int(part)
    return int(match.group(1) or 0) * 86400 + seconds


class Runner(object):
    """Runs argv lists with a timeout; remembers the last argv (returned as ``cmd``)."""

    def __init__(self, timeout=30, cwd=None, env=None):
        self.timeout = timeout
        self.cwd = cwd
        self.env = env
        self.history: List[List[str]] = []

    def run(self, argv, check=True, input_text=None):
        argv = [str(a) for a in argv]
        self.history.append(argv)
        try:
            proc = subprocess.run(argv, cwd=self.cwd, env=self.env, input=input_text, capture_output=True,
                                  text=True, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise SchedulerTimeout("the scheduler did not answer within %s s: %s" % (self.timeout, " ".join(argv)),
                                   cmd=argv, stdout=_text(exc.stdout), stderr=_text(exc.stderr))
        except OSError as exc:
            raise SubmitError("cannot run %s: %s (is the scheduler's client installed and on PATH?)"
                              % (argv[0], exc.strerror or exc), cmd=argv)
        if check and proc.returncode != 0:
            raise SubmitError("%s failed (rc %d): %s" % (argv[0], proc.returncode, message(proc.stdout, proc.stderr)),
                              cmd=argv, rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
        return proc.returncode, proc.stdout, proc.stderr

    @property
    def last(self):
        return self.history[-1] if self.history else []


def _text(value):
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def message(out, err):
    """The scheduler's own words: stderr when it said something, else stdout, on one line."""
    text = (err or "").strip() or (out or "").strip() or "no message"
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def directives(text, prefix):
    """Argument words of the directive lines ('#SBATCH --x=1' -> ['--x=1']) before the first command."""
    words = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#!"):
            continue
        if not stripped.startswith("#"):
            break
        if stripped.startswith(prefix + " ") or stripped.startswith(prefix + "\t"):
            rest = stripped[len(prefix):].split("#", 1)[0].strip()
            words.extend(rest.split())
    return words


def detect_scheduler(text):
    """Read the scheduler from the script's directives: #SBATCH, #PBS with select= (PBS Pro), #PBS, else local."""
    if directives(text, "#SBATCH"):
        return "slurm"
    pbs = directives(text, "#PBS")
    if pbs:
        return "pbspro" if any("select=" in word for word in pbs) else "torque"
    return "local"


def option_value(words, long_names=(), short_names=()):
    """The value of the last matching option in a word list ('--job-name=x', '--job-name x', '-J x', '-Jx')."""
    found = None
    i = 0
    while i < len(words):
        word = words[i]
        for name in long_names:
            if word == name and i + 1 < len(words):
                found = words[i + 1]
            elif word.startswith(name + "="):
                found = word[len(name) + 1:]
        for name in short_names:
            if word == name and i + 1 < len(words):
                found = words[i + 1]
            elif word.startswith(name) and len(word) > len(name) and not word.startswith("--"):
                found = word[len(name):]
        i += 1
    return found


def which(cmd, path=None):
    """Like shutil.which, kept here so tests can point PATH elsewhere."""
    for folder in (path or os.environ.get("PATH", "")).split(os.pathsep):
        candidate = os.path.join(folder, cmd)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
