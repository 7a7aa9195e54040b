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


def _read(path, offset, size):
    """(bytes of the regular file ``path`` from ``offset`` (from the end when negative), at most ``size``, the
    offset they start at); (None, offset) when it cannot be read."""
    try:
        handle, info = files.open_regular(path)
    except (OSError, OutputError):
        return None, offset
    if handle is None:
        return None, offset
    try:
        start = max(0, info.st_size + offset) if offset < 0 else min(offset, info.st_size)
        os.lseek(handle, start, os.SEEK_SET)
        return os.read(handle, size), start
    except OSError:
        return None, offset
    finally:
        os.close(handle)


def last_lines(path, count=1, max_bytes=MAX_BYTES):
    """The last ``count`` non-empty lines of ``path`` (a list, oldest first), read from its last ``max_bytes``;
    [] when it cannot be read."""
    if not path or count <= 0:
        return []
    data, start = _read(path, -max_bytes, max_bytes)
    if data is None:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if start > 0 and len(lines) > 1:
        lines = lines[1:]          # the first line was cut by the byte window
    lines = [line for line in lines if line.strip()]
    return [_printable(line.rstrip()) for line in lines[-count:]]


def new_lines(path, offset, max_bytes=65536, final=False):
    """(the whole lines ``path`` holds from byte ``offset`` on, as last_lines shows them, the offset after them):
    following a file that is still written. A last line without its newline waits for the next call unless
    ``final``. ([], offset) while the file cannot be read."""
    if not path:
        return [], offset
    data, start = _read(path, offset, max_bytes)
    if data is not None and start < offset:     # the file is shorter than what was read: truncated, read it again
        data, start = _read(path, 0, max_bytes)
    if not data:
        return [], offset if data is None else start
    end = len(data) if final else data.rfind(b"\n") + 1
    if end == 0 and len(data) >= max_bytes:
        end = len(data)            # a line longer than the window (a progress bar's carriage returns): shown cut
    lines = data[:end].decode("utf-8", errors="replace").splitlines()
    return [_printable(line.rstrip()) for line in lines], start + end
