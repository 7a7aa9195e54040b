# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The last lines of a file that is still being written (a job's output, a build log), read safely.

Safely: only a regular file is read, opened without following a link (a link to a file the job could not read,
or a FIFO or a device put at the path, never blocks, floods or leaks to the caller), its directories one
component at a time (``files.open_regular``: a job that turns a directory of the path into a link shows nothing of
the linked file to a reader who is not the job's user), at most ``MAX_BYTES`` from its end, decoded leniently,
with control characters (terminal escape sequences included) shown as ``?`` and every line cut to ``MAX_LINE``
characters, so that what is shown on the user's terminal is plain text of bounded size whatever the file holds.
"""

from __future__ import annotations

import os
import unicodedata

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError

MAX_BYTES = 4096
MAX_LINE = 200


def _printable(line):
    text = "".join("?" if unicodedata.category(c).startswith("C") and c != "\t" else c for c in line)
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."


def last_lines(path, count=1):
    """The last ``count`` non-empty lines of ``path`` (a list, oldest first); [] when it cannot be read."""
    if not path or count <= 0:
        return []
    try:
        handle, info = files.open_regular(path)
    except (OSError, OutputError):
        return []
    if handle is None:
        return []
    try:
        start = max(0, info.st_size - MAX_BYTES)
        os.lseek(handle, start, os.SEEK_SET)
        data = os.read(handle, MAX_BYTES)
    except OSError:
        return []
    finally:
        os.close(handle)
    lines = data.decode("utf-8", errors="replace").splitlines()
    if start > 0 and len(lines) > 1:
        lines = lines[1:]          # the first line was cut by the byte window
    lines = [line for line in lines if line.strip()]
    return [_printable(line.rstrip()) for line in lines[-count:]]
