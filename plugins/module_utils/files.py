# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing results: only inside the output directory, atomically, and only when changed."""

from __future__ import annotations

import errno
import os
import re
import tempfile

from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError

_FILENAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\Z")


def target_path(output_dir, filename):
    """The absolute path of ``filename`` inside ``output_dir``; refuses anything that leaves it."""
    if not _FILENAME.match(filename) or ".." in filename:
        raise OutputError("refusing file name %r: letters, digits, '_', '.' and '-' only" % (filename,))
    root = os.path.realpath(output_dir)
    path = os.path.join(root, filename)
    if os.path.dirname(path) != root:
        raise OutputError("refusing to write %r outside %s" % (filename, root))
    if os.path.islink(path):
        raise OutputError("refusing to write through the symbolic link %s" % path)
    return path


def read_existing(path):
    """Current content of a regular file, or None when there is none."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise OutputError("cannot read %s: %s" % (path, exc.strerror))
    except UnicodeDecodeError:
        return ""


def write_atomic(path, content, mode=0o755):
    """Write ``content`` to ``path`` through a temporary file and rename; True when it changed."""
    if read_existing(path) == content:
        return False
    directory = os.path.dirname(path)
    handle, tmp = tempfile.mkstemp(dir=directory, prefix=".modak-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
    return True


def ensure_dir(output_dir):
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        raise OutputError("cannot create output directory %s: %s" % (output_dir, exc.strerror))
    if not os.path.isdir(output_dir):
        raise OutputError("output_dir %s is not a directory" % output_dir)
