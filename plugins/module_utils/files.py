# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing results: only inside the output directory, atomically, and only when changed.

``place`` is the collection's one placement of a file into an output directory: every module writes through it
on its host, and the action plugins (plugins/plugin_utils/remote_files.py) and the roles through the
sodalite.modak.output_file module, which runs it on the managed host. ``read_for_diff`` reads the file it would
replace, for --diff."""

from __future__ import annotations

import binascii
import errno
import hashlib
import os
import re
import stat

from ansible_collections.sodalite.modak.plugins.module_utils import path_trust
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


SAME, MODE, CHANGED = "same", "mode", "changed"
NOT_REGULAR, TOO_LARGE = object(), object()
DIFF_LIMIT = 1 << 20     # the most bytes --diff reads of a file it would replace (a job script, a recipe: far less)
_STEPS = 4096           # components, links followed and directories made, in all


def open_directory(directory, create=False):
    """A descriptor of ``directory`` (absolute, or relative to the working directory), opened one component at a
    time without following a link that another user could have put there (a link in a directory that only its
    owner, this user or root, can change is followed); None when it is missing (``create``: made, 0700 whatever the
    umask). Anything else than a directory on the way is refused with OutputError."""
    path = os.path.abspath(directory)
    parts = [part for part in path.split("/") if part]
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    steps = 0
    try:
        while parts:
            steps += 1
            if steps > _STEPS:
                raise OutputError("cannot open the directory %s: too many links, or it keeps changing" % path)
            part = parts.pop(0)
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOENT and create:
                    try:
                        os.mkdir(part, 0o700, dir_fd=fd)   # private: it may hold secrets
                    except FileExistsError:
                        pass
                    parts.insert(0, part)
                    continue
                if exc.errno == errno.ENOENT:
                    os.close(fd)
                    return None
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not stat.S_ISLNK(
                        os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OutputError("cannot open the directory %s: %s is not a directory (%s)" % (
                        path, part, exc.strerror))
                if not _may_follow(fd, part):
                    raise OutputError("refusing the directory %s: %s is a link in a directory that other users "
                                      "can change" % (path, part))
                target = os.readlink(part, dir_fd=fd)
                parts[:0] = [p for p in target.split("/") if p]
                if target.startswith("/"):
                    os.close(fd)
                    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                continue
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _may_follow(dir_fd, name):
    """True when the link ``name`` in the directory ``dir_fd`` cannot be another user's (``link_may_be_followed``)."""
    return path_trust.link_may_be_followed(os.fstat(dir_fd),
                                           lambda: os.stat(name, dir_fd=dir_fd, follow_symlinks=False))


def open_file(dir_fd, name):
    """A read descriptor of the regular file ``name`` in ``dir_fd`` and its fstat, opened without following a link
    and without blocking (a FIFO); (None, None) when there is no regular file there."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0),
                     dir_fd=dir_fd)
    except OSError:
        return None, None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None, None
    return fd, info


def open_regular(path):
    """(a read descriptor, its fstat) of the regular file ``path``, its directories opened one component at a time
    as ``open_directory`` opens them and the file without following a link or blocking; (None, None) when there is
    no regular file there. For a file that another user (a job) writes, read by someone else."""
    directory, name = os.path.split(os.path.abspath(path))
    dir_fd = open_directory(directory)
    if dir_fd is None:
        return None, None
    try:
        return open_file(dir_fd, name)
    finally:
        os.close(dir_fd)


def read_written(dir_fd, name, what):
    """The bytes of the file ``name`` of the directory ``dir_fd`` that modak wrote for this user: a regular file of
    this user (or root) with one name, read without following a link or blocking; None when nothing is there.
    Anything else is refused (OutputError naming ``what``): in a directory that others may write (a sticky
    scratch directory), a record or a manifest that another user wrote could list the user's own files for a
    removal."""
    fd, info = open_file(dir_fd, name)
    if fd is None:
        if kind(dir_fd, name) is None:
            return None
        raise OutputError("refusing %s: it is not a regular file" % what)
    try:
        if info.st_uid not in (0, os.geteuid()) or info.st_nlink != 1:
            raise OutputError("refusing %s: modak did not write it (it belongs to uid %d, or has other names)"
                              % (what, info.st_uid))
        return read_fd(fd)
    finally:
        os.close(fd)


def read_fd(fd, limit=None):
    """What the descriptor ``fd`` holds from where it stands; at most ``limit`` bytes when it is given."""
    chunks, size = [], 0
    while limit is None or size < limit:
        chunk = os.read(fd, 1 << 16 if limit is None else min(1 << 16, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def kind(dir_fd, name):
    """What is at ``name`` of the directory ``dir_fd``: None (nothing), 'directory' (one, or a link to one),
    'other' (anything else)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return "directory"
    if stat.S_ISLNK(info.st_mode):
        try:
            if stat.S_ISDIR(os.stat(name, dir_fd=dir_fd).st_mode):
                return "directory"
        except OSError:
            pass
    return "other"


def _opened(directory, name, check_mode):
    """(descriptor of ``directory`` or None when it is missing in check mode, the file's path); refuses a
    directory, or a link to one, at the path (OutputError)."""
    path = os.path.join(os.path.abspath(directory), name)
    dir_fd = open_directory(directory, create=not check_mode)
    if dir_fd is not None and kind(dir_fd, name) == "directory":
        os.close(dir_fd)
        raise OutputError("refusing to write %s: it is a directory or a link to one" % path)
    return dir_fd, path


def place(directory, name, content, mode, check_mode=False):
    """Put the file ``name`` (one plain name) with ``content`` (text or bytes) and permission bits ``mode`` into
    ``directory`` (made when missing); SAME, MODE (only the mode was set) or CHANGED. In check mode only compares.

    The one placement of the collection, safe in a directory that other users can write: the old file is opened
    once without following a link and its mode set on that descriptor; a new file is a fresh temporary file of
    the directory, its mode set on its descriptor, renamed over the path (a link there is replaced, never
    followed). A directory, or a link to one, at the path is refused (OutputError); so is the rename when a
    directory is swapped in meanwhile (EISDIR)."""
    check_filename(name)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    dir_fd, path = _opened(directory, name, check_mode)
    if dir_fd is None:
        return CHANGED
    try:
        fd, info = open_file(dir_fd, name)
        if fd is not None:
            try:
                # the size first: a file planted at the name (a huge sparse one) is never read whole
                if info.st_size == len(data) and info.st_uid == os.geteuid() and info.st_nlink == 1 and \
                        read_fd(fd, len(data) + 1) == data:
                    if stat.S_IMODE(info.st_mode) == mode:
                        return SAME
                    if not check_mode:
                        os.fchmod(fd, mode)
                    return MODE
            finally:
                os.close(fd)
        if not check_mode:
            _replace(dir_fd, name, path, lambda tmp: _write_new(dir_fd, tmp, mode, (data,)))
        return CHANGED
    finally:
        os.close(dir_fd)


def place_copy(directory, name, source, check_mode=False):
    """Put a hard link to the regular file ``source`` (else a copy, with its mode) as ``name`` (a name os.listdir
    gave) into ``directory``, as ``place`` puts a file; SAME when a regular file of the same size is there already
    (a large file that is never rewritten in place: a wheel), else CHANGED. ``source`` is reached as
    ``open_regular`` reaches a file (its directories one component at a time, the file itself never through a
    link): a link planted in a shared source directory never brings the file it points to, and anything else than
    a regular file is refused (OutputError)."""
    if not name or "/" in name or name in (".", ".."):
        raise OutputError("refusing file name %r" % (name,))
    src_dir, src_name = os.path.split(os.path.abspath(source))
    src_dir_fd = open_directory(src_dir)
    if src_dir_fd is None:
        raise OutputError("%s is not there" % src_dir)
    try:
        src_fd, src_info = open_file(src_dir_fd, src_name)
        if src_fd is None:
            raise OutputError("%s is not there" % source if kind(src_dir_fd, src_name) is None else
                              "%s is not a regular file (a link or a special file): it is not placed" % source)
        try:
            return _place_copy(directory, name, (src_dir_fd, src_name, src_fd, src_info), check_mode)
        finally:
            os.close(src_fd)
    finally:
        os.close(src_dir_fd)


def _place_copy(directory, name, source, check_mode):
    """place_copy's placement of the file opened as ``source`` (see ``_link_or_copy``)."""
    dir_fd, path = _opened(directory, name, check_mode)
    if dir_fd is None:
        return CHANGED
    try:
        try:
            there = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(there.st_mode) and there.st_size == source[3].st_size:
                return SAME
        except FileNotFoundError:
            pass
        if not check_mode:
            _replace(dir_fd, name, path, lambda tmp: _link_or_copy(dir_fd, tmp, source))
        return CHANGED
    finally:
        os.close(dir_fd)


def place_from(directory, name, source, mode, check_mode=False):
    """Put a copy of the file ``source`` as ``name`` with ``mode`` into ``directory``, as ``place`` puts a file;
    CHANGED, or None when nothing is at ``source``. ``source`` is a file that another user (a job) controls: it is
    opened once as ``open_regular`` opens it (its directories one component at a time, a link followed only where
    no other user can have put it; the file without following a link) and copied from that descriptor; anything
    else than a regular file reached so is refused (OutputError)."""
    check_filename(name)
    src_dir, src_name = os.path.split(os.path.abspath(source))
    src_dir_fd = open_directory(src_dir)
    if src_dir_fd is None or kind(src_dir_fd, src_name) is None:
        if src_dir_fd is not None:
            os.close(src_dir_fd)
        return None
    try:
        fd, _info = open_file(src_dir_fd, src_name)
    finally:
        os.close(src_dir_fd)
    if fd is None:
        raise OutputError("%s is not a regular file (a link or a special file): it is not copied" % source)
    try:
        dir_fd, path = _opened(directory, name, check_mode)
        if dir_fd is None:
            return CHANGED
        try:
            if not check_mode:
                _replace(dir_fd, name, path,
                         lambda tmp: _write_new(dir_fd, tmp, mode, iter(lambda: os.read(fd, 1 << 20), b"")))
            return CHANGED
        finally:
            os.close(dir_fd)
    finally:
        os.close(fd)


def _write_new(dir_fd, tmp, mode, chunks):
    """The new file ``tmp`` of ``dir_fd`` (FileExistsError when the name is taken), ``mode`` set on its
    descriptor, holding ``chunks`` (bytes)."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        os.fchmod(fd, mode)
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _link_or_copy(dir_fd, tmp, source):
    """``tmp`` of ``dir_fd``: a hard link to the file opened as ``source`` (its directory's descriptor, its name,
    its descriptor and fstat), made without following a link and kept only when it names that very file, else a
    copy read from its descriptor, with its permission bits (never set-user-ID, set-group-ID or sticky)."""
    src_dir_fd, src_name, src_fd, src_info = source
    try:
        os.link(src_name, tmp, src_dir_fd=src_dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise
    except (OSError, NotImplementedError):
        pass                              # another file system, or links refused: a copy
    else:
        linked = os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False)
        if (linked.st_dev, linked.st_ino) == (src_info.st_dev, src_info.st_ino):
            return
        _unlink(dir_fd, tmp)              # the name was given to another file since it was opened: a copy
    os.lseek(src_fd, 0, os.SEEK_SET)
    # the permission bits only: a set-user-ID wheel of another user's would become the caller's (root's under become)
    _write_new(dir_fd, tmp, stat.S_IMODE(src_info.st_mode) & 0o777, iter(lambda: os.read(src_fd, 1 << 20), b""))


def _replace(dir_fd, name, path, make):
    """``make(tmp)`` makes a fresh temporary file of ``dir_fd`` (FileExistsError: the name is taken, another is
    tried), which is renamed to ``name``; it is removed when anything fails."""
    for _try in range(100):
        tmp = ".modak-%s.%s.tmp" % (name, binascii.hexlify(os.urandom(6)).decode("ascii"))
        try:
            make(tmp)
        except FileExistsError:
            continue
        except BaseException:
            _unlink(dir_fd, tmp)
            raise
        break
    else:
        raise OutputError("cannot create a temporary file next to %s" % path)
    rename_into(dir_fd, tmp, name, path)


def rename_into(dir_fd, tmp, name, path):
    """Rename the file ``tmp`` of ``dir_fd`` to ``name`` (``path`` names it in messages): a link or a file there is
    replaced, never followed. A directory there, or a name this user may not replace (another user's in a sticky
    directory of someone else), is refused with OutputError; ``tmp`` is removed when the rename fails."""
    try:
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException as exc:
        _unlink(dir_fd, tmp)
        if isinstance(exc, OSError) and exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise OutputError("refusing to write %s: a directory is there" % path)
        if isinstance(exc, OSError) and exc.errno == errno.EPERM:
            raise OutputError("refusing to write %s: something of another user is there (%s)" % (path, exc.strerror))
        raise
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def open_fresh(dir_fd, name, path):
    """(a temporary name beside ``name``, a write descriptor of that new empty file of the directory ``dir_fd``):
    made without following a link (O_EXCL), with the mode a shell's '>' gives a new file (0666 less the umask);
    ``rename_into`` then puts it at ``name``. For an output handed to a process before its name is known."""
    for _try in range(100):
        tmp = ".modak-%s.%s.tmp" % (name[:64], binascii.hexlify(os.urandom(6)).decode("ascii"))
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                                dir_fd=dir_fd)
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError("cannot create a file next to %s: %s" % (path, exc.strerror))
    raise OutputError("cannot create a temporary file next to %s" % path)


def place_in(dir_fd, name, content, mode):
    """``place`` into a directory already opened (``dir_fd``), without comparing: a fresh file holding ``content``
    (text or bytes) with ``mode``, renamed over ``name`` (a link there is replaced, never followed)."""
    check_filename(name)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    _replace(dir_fd, name, name, lambda tmp: _write_new(dir_fd, tmp, mode, (data,)))


def _unlink(dir_fd, name):
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _current(directory, name, limit=None):
    """The bytes of the file ``name`` of ``directory``: None when there is nothing there, NOT_REGULAR when it is
    not a regular file (never read through a link, never opened so that a FIFO blocks); TOO_LARGE when ``limit`` is
    given and the file holds more bytes."""
    dir_fd = open_directory(directory)
    if dir_fd is None:
        return None
    try:
        if kind(dir_fd, name) is None:
            return None
        fd, info = open_file(dir_fd, name)
        if fd is None:
            return NOT_REGULAR
        try:
            if limit is not None and info.st_size > limit:
                return TOO_LARGE
            data = read_fd(fd, None if limit is None else limit + 1)
            return TOO_LARGE if limit is not None and len(data) > limit else data
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def read_regular(directory, name):
    """The bytes of the regular file ``name`` of ``directory``, read without following a link or blocking; None
    when nothing is there, NOT_REGULAR when something else than a regular file is."""
    return _current(directory, name)


def sha256_of(fd):
    """The SHA-256 (hex) of what the descriptor ``fd`` holds from its start, read in chunks."""
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    for chunk in iter(lambda: os.read(fd, 1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()


REMOVED, KEPT = "removed", "kept"


def remove_if_holds(dir_fd, name, sha256, check_mode=False):
    """Remove the file ``name`` of the directory ``dir_fd`` when it is a regular file of this user (or root) that
    holds what hashes to ``sha256``: REMOVED, KEPT (anything else is there: other content, another owner, a link,
    a directory) or None (nothing is there). The file is opened once without following a link and hashed from
    that descriptor, and the name is removed from that same directory (never through a path whose directories may
    have changed since) only while it still names the file hashed."""
    check_filename(name)
    fd, info = open_file(dir_fd, name)
    if fd is None:
        return None if kind(dir_fd, name) is None else KEPT
    try:
        if info.st_uid not in (0, os.geteuid()) or sha256_of(fd) != sha256:
            return KEPT
    finally:
        os.close(fd)
    if not check_mode:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            return KEPT
        os.unlink(name, dir_fd=dir_fd)
    return REMOVED


def remove_directory_if_empty(directory, dir_fd, check_mode=False):
    """Remove ``directory`` (whose descriptor is ``dir_fd``) when it is empty, from a descriptor of its parent and
    only while its name there still names that directory; True when it was removed (or would be)."""
    parent, name = os.path.split(os.path.abspath(directory))
    if not name or os.listdir(dir_fd):
        return False
    parent_fd = open_directory(parent)
    if parent_fd is None:
        return False
    try:
        mine, there = os.fstat(dir_fd), os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        if (mine.st_dev, mine.st_ino) != (there.st_dev, there.st_ino):
            return False
        if not check_mode:
            try:
                os.rmdir(name, dir_fd=parent_fd)       # fails when something was put there meanwhile
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False
                raise
        return True
    finally:
        os.close(parent_fd)


def _text(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_for_diff(directory, name):
    """The file ``name`` of ``directory`` as --diff shows it before: its text, '' when there is none, a line that
    says it is not a regular file (a link, a directory, a FIFO...), is larger than DIFF_LIMIT (never read whole) or
    is not text."""
    data = _current(directory, name, DIFF_LIMIT)
    if data is None:
        return ""
    if data is NOT_REGULAR:
        return "(%s is not a regular file: a link, a directory or a special file; not read)\n" % name
    if data is TOO_LARGE:
        return "(%s holds more than %d bytes; not read)\n" % (name, DIFF_LIMIT)
    text = _text(data)
    return "(%s is not UTF-8 text)\n" % name if text is None else text


def write_atomic(path, content, mode=0o755):
    """``place`` for a path; True when it changed (content or mode)."""
    directory, name = os.path.split(path)
    return place(directory, name, content, mode) != SAME


def ensure_dir(output_dir):
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        raise OutputError("cannot create output directory %s: %s" % (output_dir, exc.strerror))
    if not os.path.isdir(output_dir):
        raise OutputError("output_dir %s is not a directory" % output_dir)
