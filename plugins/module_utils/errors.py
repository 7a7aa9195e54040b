# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors of the optimiser core: every problem names its path in the DSL."""

from __future__ import annotations

import difflib
import json
import re

_PLAIN_KEY = re.compile(r"^[^.\[\]\s\"]+$")


class DslProblem(object):
    """One problem found in a DSL document.

    ``path`` is dotted (``job.application.mpi_ranks``, ``job.application.arguments[2]``),
    ``value`` the offending value (or None) and ``hint`` what to do about it; ``location`` is
    ``file:line:column`` of the value in the file it was read from (or of its parent key when the value is
    missing), None for a document that did not come from a file.
    """

    __slots__ = ("path", "message", "value", "hint", "location")

    def __init__(self, path, message, value=None, hint=None, location=None):
        self.path = path
        self.message = message
        self.value = value
        self.hint = hint
        self.location = location

    def as_dict(self):
        return {"path": self.path, "message": self.message, "value": self.value, "hint": self.hint,
                "location": self.location}

    def located(self, location, hint=None):
        """The same problem at ``location`` (file:line:column), with ``hint`` added to its own."""
        hints = "; ".join(h for h in (self.hint, hint) if h) or None
        return DslProblem(self.path, self.message, self.value, hints, location)

    def __str__(self):
        text = "%s: %s" % (self.path or "(document)", self.message)
        if self.location:
            text = "%s: %s" % (self.location, text)
        if self.value is not None:
            shown = repr(self.value)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            text += " (got %s)" % shown
        if self.hint:
            text += "; hint: %s" % self.hint
        return text

    def __repr__(self):
        return "DslProblem(%r)" % str(self)

    def __eq__(self, other):
        return isinstance(other, DslProblem) and self.as_dict() == other.as_dict()

    def __hash__(self):
        return hash(str(self))


class ModakError(Exception):
    """Base class of the errors the core raises on purpose."""


class DslInvalid(ModakError):
    """The DSL document has problems; ``problems`` lists all of them at once."""

    def __init__(self, problems):
        self.problems = list(problems)
        lines = ["the optimisation DSL has %d problem(s):" % len(self.problems)]
        lines.extend("  - %s" % p for p in self.problems)
        super(DslInvalid, self).__init__("\n".join(lines))


class SiteInvalid(ModakError):
    """A site profile has problems; ``source`` names the file (or the option that gave it), ``problems`` lists
    every problem at its field in the profile."""

    def __init__(self, source, problems):
        self.source = source
        self.problems = list(problems)
        lines = ["the site profile %s has %d problem(s):" % (source, len(self.problems))]
        lines.extend("  - %s: %s" % (source, p) for p in self.problems)
        super(SiteInvalid, self).__init__("\n".join(lines))


class CatalogError(ModakError):
    """The image catalog cannot be read or is malformed."""


class OutputError(ModakError):
    """A result cannot be written where it was asked to be written."""


class PerfError(ModakError, ValueError):
    """The performance model, its results store or a tuning run cannot do what was asked (also a ValueError)."""


class CommandError(ModakError):
    """An external command failed or could not run; ``cmd``, ``rc``, ``stdout`` and ``stderr`` say how."""

    def __init__(self, message, cmd=None, rc=None, stdout="", stderr=""):
        super(CommandError, self).__init__(message)
        self.cmd = cmd
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr


class CommandTimeout(CommandError):
    """An external command did not answer within its timeout."""


class SubmitError(CommandError):
    """A scheduler command failed or the job could not be handled; the message says why."""


class SchedulerTimeout(SubmitError, CommandTimeout):
    """A scheduler command did not answer within the timeout."""


def nearest(word, choices):
    """Return the closest valid choice to ``word`` or None (used for 'did you mean')."""
    found = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return found[0] if found else None


def path_str(parts):
    """Render a path given as a sequence of keys and indexes: ('job', 'a', 2) -> 'job.a[2]'.

    A key that is empty or would read as path syntax is shown quoted (``job[""]``), so a path is never empty.
    """
    out = ""
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            out += "[%d]" % part
        elif not _PLAIN_KEY.match(str(part)):
            out += "[%s]" % json.dumps(str(part))
        elif out:
            out += "." + str(part)
        else:
            out = str(part)
    return out


def printable(text, limit=None):
    """``text`` for a terminal, on one line: control characters (C0, DEL, C1), line and paragraph separators and
    bidi and other format characters escaped (``\\x1b``, ``\\u202e``); at most ``limit`` characters when given."""
    text = str(text)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "..."
    return "".join(c if c.isprintable() else ("\\x%02x" % ord(c) if ord(c) < 0x100 else "\\u%04x" % ord(c))
                   for c in text)
