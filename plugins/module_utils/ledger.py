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


def check_directory(directory, create=False):
    """Refuse batch_job's state directory ``directory`` (``<chdir>/.modak``) when someone else than the user and
    root may change it (OutputError): its files are written by their names (a local job's pid and exit status) and
    trusted (the ledger says which job is the same job), so in a shared work directory (a 1777 scratch directory)
    a ``.modak`` that another user made first, or a link they put there, would have the user write through their
    links and read their forgeries. ``create``: made (0700) when missing. Nothing happens when it is missing
    otherwise, or when the work directory cannot hold it (read-only)."""
    try:
        fd = files.open_directory(directory, create=create)
    except PermissionError:
        return
    except OutputError as exc:
        raise OutputError("refusing batch_job's state directory %s: %s" % (directory, exc))
    if fd is None:
        return
    try:
        why = path_trust.others_may_change(os.fstat(fd))
    finally:
        os.close(fd)
    if why:
        raise OutputError("refusing batch_job's state directory %s: %s; it must be the user's and closed to others "
                          "(remove it, or chmod go-w it when it is yours)" % (directory, why))


@contextlib.contextmanager
def locked(path):
    """Hold the ledger's lock for the block; a directory that cannot hold it runs the block unlocked."""
    handle = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
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


def read(path):
    """The ledger as a dict ({} when it is missing or unreadable)."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (IOError, OSError, ValueError):
        return {}


def record(path, key, entry):
    """Add or replace one entry; the caller holds ``locked(path)``. False when it could not be written."""
    data = read(path)
    data[key] = entry
    try:
        files.ensure_dir(os.path.dirname(path))
        files.write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n", mode=0o644)
    except OutputError:
        return False   # the ledger helps idempotence; a read-only chdir must not fail a submitted job
    return True
