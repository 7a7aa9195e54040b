# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batch_job ledger ``<chdir>/.modak/jobs.json``: job key -> job id, content hash, script.

Concurrent tasks share one ledger, so every read-modify-write (and the submission it records) runs
under an exclusive ``fcntl.flock`` on ``jobs.json.lock`` next to it, the way Slurm's and Apptainer's
own state files are guarded; the file itself is replaced atomically, so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os

from ansible_collections.sodalite.modak.plugins.module_utils import files, path_trust
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError


def open_state_directory(directory, create=False):
    """A descriptor of batch_job's state directory ``directory`` (``<chdir>/.modak``), checked on that descriptor;
    None when it is missing, or when the work directory cannot hold it (read-only). Its files are written by their
    names (a local job's pid and exit status) and trusted (the ledger says which job is the same job), so one that
    someone else than the user and root may change is refused (OutputError): in a shared work directory (a 1777
    scratch directory) a ``.modak`` that another user made first, or a link they put there, would have the user
    write through their links and read their forgeries. Every file of it is then read and written through this
    descriptor, never by a path: in a work directory that others may write (2770), a ``.modak`` renamed away
    and replaced after the check is never the one read. ``create``: made (0700) when missing."""
    try:
        fd = files.open_directory(directory, create=create)
    except PermissionError:
        return None
    except OutputError as exc:
        raise OutputError("refusing batch_job's state directory %s: %s" % (directory, exc))
    if fd is None:
        return None
    why = path_trust.others_may_change(os.fstat(fd), fd)
    if why:
        os.close(fd)
        raise OutputError("refusing batch_job's state directory %s: %s; it must be the user's and closed to others "
                          "(remove it, or chmod go-w it when it is yours)" % (directory, why))
    return fd


@contextlib.contextmanager
def state_directory(directory, create=False):
    """``open_state_directory`` for the block (the descriptor, or None); closed after it."""
    fd = open_state_directory(directory, create)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def check_directory(directory, create=False):
    """Refuse the state directory ``directory`` when others may change it (OutputError; see
    ``open_state_directory``); ``create``: made (0700) when missing."""
    with state_directory(directory, create):
        pass


def present(directory, names):
    """Those of ``names`` that are regular files of the state directory ``directory`` (none when it is missing)."""
    with state_directory(directory) as fd:
        return [] if fd is None else [name for name in names if read_file(fd, name)[1] is not None]


def read_file(dir_fd, name):
    """(the bytes, the fstat) of the regular file ``name`` of the state directory ``dir_fd``, read without following
    a link or blocking; (None, None) when there is none."""
    fd, info = files.open_file(dir_fd, name)
    if fd is None:
        return None, None
    try:
        return files.read_fd(fd), info
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path):
    """Hold the ledger's lock for the block; a directory that cannot hold it runs the block unlocked."""
    handle = None
    with state_directory(os.path.dirname(path), create=True) as dir_fd:
        try:
            if dir_fd is not None:
                handle = os.open(os.path.basename(path) + ".lock",
                                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
                fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            if handle is not None:
                os.close(handle)
            handle = None   # read-only chdir: nothing can be recorded there anyway
    try:
        yield
    finally:
        if handle is not None:
            os.close(handle)   # closing releases the lock


def _parsed(data):
    try:
        found = json.loads(data.decode("utf-8")) if data is not None else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def read(path):
    """The ledger as a dict ({} when it is missing or unreadable); OutputError when its directory is refused."""
    with state_directory(os.path.dirname(path)) as dir_fd:
        return {} if dir_fd is None else _parsed(read_file(dir_fd, os.path.basename(path))[0])


def record(path, key, entry):
    """Add or replace one entry; the caller holds ``locked(path)``. False when it could not be written."""
    name = os.path.basename(path)
    try:
        with state_directory(os.path.dirname(path), create=True) as dir_fd:
            if dir_fd is None:
                return False
            data = _parsed(read_file(dir_fd, name)[0])
            data[key] = entry
            files.place_in(dir_fd, name, json.dumps(data, indent=1, sort_keys=True) + "\n", 0o644)
    except (OutputError, OSError):
        return False   # the ledger helps idempotence; a read-only chdir must not fail a submitted job
    return True
