# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DSL's values read into numbers and words: durations, sizes, mail events, expanded environment words."""

from __future__ import annotations

import math
import re

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import nearest

SLURM_EVENTS = ("NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
                "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS")
PBS_LETTERS = {"a": "FAIL", "b": "BEGIN", "e": "END", "n": "NONE"}
_MEM_UNITS = {"": 1.0, "k": 1.0 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}


_ISO_DURATION = re.compile(r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?\Z")
_SBATCH_DURATION = re.compile(r"(?:([0-9]+)-)?([0-9]+)(?::([0-9]+))?(?::([0-9]+))?\Z")


def walltime_seconds(value):
    """A wall time -> seconds, in sbatch(1)'s --time forms but for a bare number, which is seconds.

    'S' (modak's: a bare number is seconds, as an integer is), 'M:S', 'H:M:S', 'D-H', 'D-H:M', 'D-H:M:S'
    (sbatch's), or ISO 8601 'P1DT2H'. Minutes and seconds after a colon are below 60.
    """
    if isinstance(value, bool):
        raise ValueError("not a duration")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    iso = _ISO_DURATION.match(text)
    if iso:
        d, h, m, s = (int(g or 0) for g in iso.groups())
        return ((d * 24 + h) * 60 + m) * 60 + s
    match = _SBATCH_DURATION.match(text)
    if not match:
        raise ValueError("not a duration")
    days, first, second, third = match.groups()
    if days is not None:                      # days-hours[:minutes[:seconds]]
        fields = (int(days) * 24 + int(first), int(second or 0), int(third or 0))
    elif third is not None:                   # hours:minutes:seconds
        fields = (int(first), int(second), int(third))
    elif second is not None:                  # minutes:seconds
        fields = (0, int(first), int(second))
    else:                                     # seconds (modak's meaning of a bare number)
        fields = (0, 0, int(first))
    if any(part is not None and int(part) >= 60 for part in (second, third)):
        raise ValueError("minutes and seconds must be below 60")
    hours, minutes, seconds = fields
    return (hours * 60 + minutes) * 60 + seconds


def memory_mb(value):
    """4096 (MiB), '4G', '512M', '1.5T' -> MiB (rounded up)."""
    if isinstance(value, bool):
        raise ValueError("not a size")
    if isinstance(value, int):
        return value
    match = re.match(r"^(\d+(?:\.\d+)?)\s?([KkMmGgTt]?)", str(value).strip())
    if not match:
        raise ValueError("not a size")
    return max(1, int(math.ceil(float(match.group(1)) * _MEM_UNITS[match.group(2).lower()])))


def mail_events(text):
    """Slurm words or PBS letters -> canonical Slurm words; raises ValueError with a hint."""
    words = [w.strip().upper() for w in str(text).split(",") if w.strip()]
    if all(w in SLURM_EVENTS for w in words):
        return tuple(words)
    if "," not in text and re.match(r"^[abenABEN]+\Z", text):
        return tuple(PBS_LETTERS[c] for c in text.lower())
    bad = [w for w in words if w not in SLURM_EVENTS]
    guess = nearest(bad[0], SLURM_EVENTS) if bad else None
    raise ValueError("unknown event %s%s" % (bad[0] if bad else text, "; did you mean %s?" % guess if guess else ""))


def expanded_word(value):
    """One shell word for an environment_expanded value: $NAME/${NAME} expanded when the job runs, the rest quoted."""
    words = shell.split_command(value)
    word = words[0] if words else ""
    return word if isinstance(word, shell.Expanding) else shell.Raw(shell.quote(word) if word else "''")


def nested(doc, *keys):
    """The value at ``keys`` in a parsed document, or None where a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc
