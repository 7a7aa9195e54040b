# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version semantics of image matching, stated once.

modak's own forms (a bare version is a prefix, compared by components, not text):

* ``"2.1"`` matches 2.1, 2.1.0, 2.1.7 and never 2.10; ``"2.1.*"`` is the same request.
* ``"2"`` matches every 2.x; the matcher then keeps the newest 2.x line.
* ``"2.1.3"`` matches 2.1.3 only (and 2.1.3.x builds).
* ``"latest"``, ``"*"`` or nothing match all.

Clauses with an operator follow PEP 440 through ``packaging.specifiers``: ``~=2.4`` is ``>=2.4,==2.*`` (2.5.1
matches), ``==2.4.*`` the 2.4 line, ``==2.4`` 2.4 and 2.4.0 only, ``!=2.5``, ``>=2.4,<2.10``. Clauses joined by
commas must all hold. Versions are digits and dots (at most four components), as the catalog's are.
"""

from __future__ import annotations

import bisect
import re
import traceback

try:
    from packaging import specifiers
    PACKAGING_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - reported by the module
    specifiers = None
    PACKAGING_IMPORT_ERROR = traceback.format_exc()

_VERSION = re.compile(r"^v?(\d+(?:\.\d+){0,3})\Z")
# a pin (bare, '=' or PEP 440's '=='/'!=') may end in '.*'; the comparisons may not (PEP 440)
_CLAUSE = re.compile(r"^(?:(==|!=|=)?\s*v?(\d+(?:\.\d+){0,3})(\.\*)?|(~=|>=|<=|>|<)\s*v?(\d+(?:\.\d+){0,3}))\Z")
_ANY = ("", "*", "latest", "any")
_PREFIX = "="          # modak's own operator: the version is a prefix of the image's
MAX_REQUEST = 1024  # characters; checked before any pattern runs (a longer request is no version request)
HINT = "use 2, 2.1, 2.1.*, 2.1.3, ~=2.4, ==2.4.*, !=2.5, >=2.4 or >=2.4,<2.10"


def parse(text):
    """'2.1.0' -> (2, 1, 0); raises ValueError on anything else."""
    match = _VERSION.match(str(text).strip())
    if not match:
        raise ValueError("not a version: %r (expected digits and dots, such as 2.1 or 2.1.3)" % (text,))
    return tuple(int(p) for p in match.group(1).split("."))


def render(version):
    return ".".join(str(p) for p in version)


def _clause(text, request):
    """One clause -> (operator, version tuple, PEP 440 specifier or None); modak's prefix has no specifier."""
    match = _CLAUSE.match(text.strip())
    if not match:
        raise ValueError("not a version request: %r (%s)" % (request, HINT))
    pin, pinned, star, compare, compared = match.groups()
    op, version = (pin or _PREFIX, pinned) if compare is None else (compare, compared)
    wanted = tuple(int(p) for p in version.split("."))
    if op == _PREFIX:
        return _PREFIX, wanted, None
    if specifiers is None:
        raise ValueError("the Python library packaging is required for the version request %r" % (request,))
    try:
        spec = specifiers.Specifier("%s%s%s" % (op, version, star or ""))
    except specifiers.InvalidSpecifier:
        raise ValueError("not a PEP 440 version request: %r (%s%s)" % (
            request, HINT, "; ~= needs two components at least, such as ~=2.4" if op == "~=" else ""))
    if star and op == "==":
        return _PREFIX, wanted, None       # '==2.4.*' is the 2.4 line, exactly modak's prefix '2.4'
    return op, wanted, spec


class VersionRequest(object):
    """What the DSL asks for; ``granularity`` is how many components it pinned."""

    def __init__(self, text):
        self.text = "" if text is None else str(text).strip()
        self.clauses = []  # (operator, version tuple, PEP 440 specifier or None for modak's prefix)
        if len(self.text) > MAX_REQUEST:
            raise ValueError("a version request is at most %d characters (got %d)" % (MAX_REQUEST, len(self.text)))
        if self.text.lower() in _ANY:
            return
        for part in self.text.split(","):
            self.clauses.append(_clause(part, self.text))

    @property
    def is_any(self):
        return not self.clauses

    @property
    def prefix(self):
        """The pinned prefix of a plain request ('2.1', '2.1.*' or '==2.1.*' -> (2, 1); '==2.1' -> (2, 1), its one
        version); None for ranges ('~=2.4' is one: PEP 440 admits 2.5)."""
        if len(self.clauses) == 1 and self.clauses[0][0] in (_PREFIX, "=="):
            return self.clauses[0][1]
        return None

    def matches(self, version):
        text = None
        for _op, want, spec in self.clauses:
            if spec is None:
                if tuple(version[:len(want)]) != want:
                    return False
                continue
            text = text or render(version)
            if not spec.contains(text, prereleases=True):
                return False
        return True

    def span(self, ordered):
        """(lo, hi) when the request is one pinned prefix ('2.1'): of the ascending version tuples ``ordered``,
        exactly ``ordered[lo:hi]`` match (two bisections instead of a test each); None for any other request."""
        if len(self.clauses) != 1 or self.clauses[0][0] != _PREFIX:
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
