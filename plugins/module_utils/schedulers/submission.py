# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the schedulers' submission sides share: a job's status, the states that mean "still queued", the
identity of a submission, and the parsing of durations and directive words."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError


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
    restarts: Optional[int] = None  # times the job was requeued (None: the scheduler does not say)
    nodes: Optional[str] = None     # the nodes it runs or ran on, as the scheduler writes them
    restarts_from: Optional[str] = None   # where the restart count comes from (the scheduler's command and field)


@dataclass
class StartEstimate:
    """What a scheduler says, without submitting, about a job submitted now: whether it fits (``fits``: False when
    the scheduler refuses it, with its words in ``said``) and when it would start (``start``: seconds since the
    epoch; None when the answer named no time)."""
    fits: bool
    start: Optional[float] = None
    said: str = ""
    nodes: Optional[str] = None


# The vocabulary of JobStatus.state is Slurm's (squeue(1), JOB STATE CODES; sacct(1), JOB STATE CODES); each
# scheduler class maps its own states onto it. What counts as still in the queue, and what counts as a good end:
ACTIVE_STATES = frozenset(("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
                           "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
                           "QUEUED", "HELD", "EXITING", "WAITING", "TRANSIT", "BEGUN"))
GOOD_STATES = frozenset(("COMPLETED",))


def whole_index(states):
    """Which element's state is a job array's (a plain job has one): an active one while any is (a running one
    first), else the first that did not end well, else the first."""
    for wanted in (lambda s: s == "RUNNING", lambda s: s in ACTIVE_STATES, lambda s: s not in GOOD_STATES):
        for index, state in enumerate(states):
            if wanted(state):
                return index
    return 0


KEY_BYTES = 32
_KEYS = {}


def key_path():
    """Where the user's key of submission digests lives: their own state directory (XDG_STATE_HOME, else
    ~/.local/state), modak/submission.key."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "modak", "submission.key")


def user_key():
    """The user's key (made once, 0600 in a 0700 directory, never through a link), read once per process. It is
    written whole under a name of its own and then linked to its place, so that a process that finds it reads a
    whole key; a key that cannot be made or read is a SubmitError that says where."""
    path = key_path()
    if path not in _KEYS:
        try:
            _KEYS[path] = _key_at(path)
        except OSError as exc:
            raise SubmitError("cannot make or read the submission key %s: %s (set XDG_STATE_HOME to a directory of "
                              "your own)" % (path, exc.strerror or exc))
    return _KEYS[path]


def _key_at(path):
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not os.path.lexists(path):
        fd, part = tempfile.mkstemp(prefix=".submission.key.", dir=directory)     # 0600, a name of its own
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(part, path)          # whole, or not at all: another process's key may have come first
        except FileExistsError:
            pass
        except OSError:                  # a file system without hard links
            if not os.path.lexists(path):
                os.rename(part, path)
        finally:
            if os.path.lexists(part):
                os.unlink(part)
    fd = os.open(path, os.O_RDONLY | nofollow)
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise SubmitError("%s is not this user's private key (owner uid %d, mode %04o): remove it, modak makes "
                              "a new one" % (path, info.st_uid, info.st_mode & 0o7777))
        key = os.read(fd, 4096)
    finally:
        os.close(fd)
    if len(key) < KEY_BYTES:
        raise SubmitError("%s is too short for a key: remove it, modak makes a new one" % path)
    return key


def digest(script_text, extra_args=()):
    """The identity of a submission: HMAC-SHA256 with the user's own key (``user_key``) over the script content and
    the extra arguments. Schedulers show it to every user (Slurm's --comment, Grid Engine's context): without the
    key nobody can confirm offline a guessed secret that the script holds."""
    h = hmac.new(user_key(), script_text.encode("utf-8"), hashlib.sha256)
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


def directive_words(text, prefix):
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
