# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The submission side of a scheduler: the small interface every backend offers, and what they share.

A scheduler module (``schedulers/<name>.py``) holds both sides of one scheduler: its directive class
(pure, used by render.py), its ``Submitter`` (argv, parsing and states, used by ``job_control.py``) and the raw
options ``extra_directives`` may carry. ``schedulers/registry.py`` lists the modules; each submitter names its
directive class as ``writer``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Optional


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


class Submitter(object):
    """Submit, follow and cancel jobs of one scheduler through a Runner.

    Class attributes: ``name`` (the registry's name), ``aliases`` (other names the DSL accepts),
    ``writer`` (the directive class of the same scheduler), ``prefix`` (its directive prefix, which
    ``claims`` looks for), ``fallback`` (True for the one backend that takes scripts nobody claims), ``batch``
    (False for a run without a scheduler, which writes no directive), ``allowed_options`` (the raw options
    ``extra_directives`` may carry: option with its dashes -> None for any value, or the values allowed; a batch
    scheduler that declares none refuses every raw option) and ``typed_options`` (option -> the job_options field
    to use instead). ``schedulers/table.py`` is generated from these declarations (``make schema``).
    Optional method: ``test_only(script, extra_args)``, a check without submitting (check mode).
    """

    name = ""
    aliases = ()
    writer = None
    prefix = None
    fallback = False
    batch = True
    allowed_options = {}
    typed_options = {}

    def __init__(self, runner, chdir=None, script=None, job_name=None):
        self.runner = runner
        self.chdir = chdir
        self.script_path = script
        self.job_name = job_name

    @classmethod
    def claims(cls, text):
        """True when a script's directives are this scheduler's."""
        return bool(cls.prefix and directive_words(text, cls.prefix))

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        """The job's name as the scheduler will see it (command line, then directives, then the file name)."""
        return os.path.basename(script_path)

    def submit(self, script, extra_args=(), digest=None):
        """Submit the script; return the job id."""
        raise NotImplementedError

    def status(self, job_id):
        """Return the JobStatus of a job, queued, running or ended."""
        raise NotImplementedError

    def cancel(self, job_id):
        """Ask the scheduler to end the job."""
        raise NotImplementedError

    def find_active(self, name, digest):
        """A queued or running job with this name and content (digest), or None when the scheduler cannot tell."""
        return None

    def check(self, script_text, extra_args=()):
        """Refuse a script or arguments that would break submission rules (raises SubmitError); none by default."""


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
