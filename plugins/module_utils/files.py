# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing results: only inside the output directory, atomically, and only when changed."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile

from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError

_FILENAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\Z")


def check_filename(filename):
    """``filename`` when it is one plain file name (no directory, no '..'); else OutputError."""
    if not _FILENAME.match(filename) or ".." in filename:
        raise OutputError("refusing file name %r: letters, digits, '_', '.' and '-' only" % (filename,))
    return filename


def target_path(output_dir, filename):
    """The absolute path of ``filename`` inside ``output_dir``; refuses anything that leaves it."""
    check_filename(filename)
    root = os.path.realpath(output_dir)
    path = os.path.join(root, filename)
    if os.path.dirname(path) != root:
        raise OutputError("refusing to write %r outside %s" % (filename, root))
    if os.path.islink(path):
        raise OutputError("refusing to write through the symbolic link %s" % path)
    return path


def _open_nofollow(path):
    """A read descriptor for the regular file ``path``, opened with O_NOFOLLOW relative to its directory's
    descriptor; None when there is no such file. A link (even one swapped in after a check) or anything but a
    regular file is refused with OutputError."""
    directory, name = os.path.split(path)
    try:
        dir_fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise OutputError("cannot open the directory %s: %s" % (directory, exc.strerror))
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        if exc.errno == errno.ELOOP:
            raise OutputError("refusing to read through the symbolic link %s" % path)
        raise OutputError("cannot read %s: %s" % (path, exc.strerror))
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError("%s is not a regular file" % path)
    return fd


def read_existing(path):
    """Current content of a regular file, or None when there is none; never through a link."""
    fd = _open_nofollow(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read()
        except (IOError, OSError) as exc:
            raise OutputError("cannot read %s: %s" % (path, exc.strerror))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def write_atomic(path, content, mode=0o755):
    """Write ``content`` (text or bytes) to ``path`` through a temporary file and rename; True when it changed.

    A link at ``path`` is replaced by the new file, never followed."""
    if not os.path.islink(path) and _same(path, content):
        return False
    directory = os.path.dirname(path)
    handle, tmp = tempfile.mkstemp(dir=directory, prefix=".modak-", suffix=".tmp")
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
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


def _same(path, content):
    try:
        if isinstance(content, bytes):
            fd = _open_nofollow(path)
            if fd is None:
                return False
            with os.fdopen(fd, "rb") as handle:
                return handle.read() == content
        return read_existing(path) == content
    except OutputError:
        return False   # a link swapped in, or not a regular file: rename over it


def ensure_dir(output_dir):
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        raise OutputError("cannot create output directory %s: %s" % (output_dir, exc.strerror))
    if not os.path.isdir(output_dir):
        raise OutputError("output_dir %s is not a directory" % output_dir)
