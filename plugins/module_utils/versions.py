# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version semantics of image matching, stated once.

* ``"2.1"`` matches 2.1, 2.1.0, 2.1.7 and never 2.10 (components, not text).
* ``"2"`` matches every 2.x; the matcher then keeps the newest 2.x line.
* ``"2.1.3"`` matches 2.1.3 only (and 2.1.3.x builds).
* ``">=2.4,<2.10"`` compares component-wise; ``"latest"``, ``"*"`` or nothing match all.
"""

from __future__ import annotations

import bisect
import re

_VERSION = re.compile(r"^v?(\d+(?:\.\d+){0,3})\Z")
_CLAUSE = re.compile(r"^(==|>=|<=|>|<|~=|=)?\s*v?(\d+(?:\.\d+){0,3})\Z")
_ANY = ("", "*", "latest", "any")
MAX_REQUEST = 1024  # characters; checked before any pattern runs (a longer request is no version request)


def parse(text):
    """'2.1.0' -> (2, 1, 0); raises ValueError on anything else."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError("not a version: %r (expected digits and dots, such as 2.1 or 2.1.3)" % (text,))
    return tuple(int(p) for p in match.group(1).split("."))


def render(version):
    return ".".join(str(p) for p in version)


def _cmp(left, right):
    """Compare padded component tuples: -1, 0, 1."""
    size = max(len(left), len(right))
    a = tuple(left) + (0,) * (size - len(left))
    b = tuple(right) + (0,) * (size - len(right))
    return (a > b) - (a < b)


class VersionRequest(object):
    """What the DSL asks for; ``granularity`` is how many components it pinned."""

    def __init__(self, text):
        self.text = "" if text is None else str(text).strip()
        self.clauses = []  # list of (operator, tuple)
        if len(self.text) > MAX_REQUEST:
            raise ValueError("a version request is at most %d characters (got %d)" % (MAX_REQUEST, len(self.text)))
        if self.text.lower() in _ANY:
            return
        for part in self.text.split(","):
            match = _CLAUSE.match(part.strip())
            if not match:
                raise ValueError(
                    "not a version request: %r (use 2, 2.1, 2.1.3, >=2.4 or >=2.4,<2.10)" % (self.text,))
            op = match.group(1) or "="
            self.clauses.append((op, tuple(int(p) for p in match.group(2).split("."))))

    @property
    def is_any(self):
        return not self.clauses

    @property
    def prefix(self):
        """The pinned prefix of a plain request ('2.1' -> (2, 1)); None for ranges."""
        if len(self.clauses) == 1 and self.clauses[0][0] in ("=", "==", "~="):
            return self.clauses[0][1]
        return None

    def matches(self, version):
        for op, want in self.clauses:
            if op in ("=", "~="):
                if tuple(version[:len(want)]) != want:
                    return False
            elif op == "==":
                if _cmp(version, want) != 0:
                    return False
            elif op == ">=" and _cmp(version, want) < 0:
                return False
            elif op == "<=" and _cmp(version, want) > 0:
                return False
            elif op == ">" and _cmp(version, want) <= 0:
                return False
            elif op == "<" and _cmp(version, want) >= 0:
                return False
        return True

    def span(self, ordered):
        """(lo, hi) when the request is one pinned prefix ('2.1'): of the ascending version tuples ``ordered``,
        exactly ``ordered[lo:hi]`` match (two bisections instead of a test each); None for any other request."""
        if len(self.clauses) != 1 or self.clauses[0][0] not in ("=", "~="):
            return None
        want = self.clauses[0][1]
        return bisect.bisect_left(ordered, want), bisect.bisect_left(ordered, want[:-1] + (want[-1] + 1,))

    def line_of(self, version):
        """The release line (major, minor) the matcher narrows to: '2' keeps only the newest 2.x
        line, '2.1' keeps 2.1 (patches are then ranked by score), '2.1.3' keeps 2.1.3."""
        prefix = self.prefix
        depth = max(2, len(prefix)) if prefix is not None else 2
        return tuple(version[:depth])

    def __str__(self):
        return self.text or "any"
