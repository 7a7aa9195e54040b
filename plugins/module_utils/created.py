# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What modak created in a directory, recorded when it created it, so that a delete removes only that.

The record is ``modak-created.json`` next to the files (written atomically through ``files.place``, 0600): each
file modak wrote, with the SHA-256 of what it wrote, and whether modak made the directory. A delete removes a
recorded file only while it still holds what modak wrote (a file the user edited since, or put there under that
name, stays), then the record, then the directory when modak made it and it is empty; as Terraform destroys only
what its state records. A create never overwrites a file that is there and not recorded (the user's own)."""

from __future__ import annotations

import json
import os

from ansible_collections.sodalite.modak.plugins.module_utils import files, path_trust
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

RECORD = "modak-created.json"


def _read(directory, name):
    """The bytes of the regular file ``name`` (never through a link); None when there is none, NOT_REGULAR when
    something else is there."""
    return files.read_regular(directory, name)


def _load_fd(dir_fd, directory):
    """The record of the directory ``dir_fd``. A record that is not a regular file of this user (or root) is
    refused: in a directory that others may write (a sticky scratch directory), another user could otherwise list
    the user's own files in a record of theirs and have a delete remove them."""
    record = {"directory_created": False, "files": {}}
    where = os.path.join(directory, RECORD)
    data = files.read_written(dir_fd, RECORD, "the record %s" % where)
    if data is None:
        return record
    try:
        found = json.loads(data.decode("utf-8"))
        record["directory_created"] = found.get("directory_created") is True
        record["files"] = {files.check_filename(k): str(v) for k, v in dict(found.get("files") or {}).items()}
    except (ValueError, AttributeError, TypeError, OutputError) as exc:
        raise OutputError("cannot read the record %s: %s" % (where, exc))
    return record


def load(directory):
    """The record of ``directory``: {"directory_created": bool, "files": {name: sha256}} (empty when none)."""
    dir_fd = files.open_directory(directory)
    if dir_fd is None:
        return {"directory_created": False, "files": {}}
    try:
        return _load_fd(dir_fd, directory)
    finally:
        os.close(dir_fd)


def foreign(directory, names):
    """Those of ``names`` that are in ``directory`` and that modak did not create there (the user's): a create
    must not overwrite them."""
    recorded = load(directory)["files"]
    return [name for name in names if name not in recorded and _read(directory, files.check_filename(name)) is not None]


def job_script_names(job_name):
    """The names a job script of ``job_name`` may have, one per scheduler's file extension."""
    return sorted(set(job_name + registry.scheduler_class(name).extension for name in registry.NAMES))


def theirs(directory):
    """The names in ``directory`` that modak did not create (none when it is missing): a file of one of these
    names that modak writes later is not recorded, so a delete keeps it."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    recorded = load(directory)["files"]
    return sorted(name for name in names if name != RECORD and name not in recorded)


def record(directory, names, directory_created=False, check_mode=False, once=False):
    """Record ``names`` (files modak just wrote into ``directory``) with the hash of what they hold; True when
    the record changed. ``directory_created``: modak made the directory (kept once recorded). ``once``: a name
    recorded already keeps the hash it was recorded with (what modak wrote then, not what the file holds now)."""
    current = load(directory)
    entries = dict(current["files"])
    dir_fd = files.open_directory(directory)
    try:
        for name in names:
            if once and name in entries:
                continue
            fd, _info = (None, None) if dir_fd is None else files.open_file(dir_fd, files.check_filename(name))
            if fd is None:
                continue
            try:
                entries[name] = files.sha256_of(fd)
            finally:
                os.close(fd)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    made = current["directory_created"] or bool(directory_created)
    if entries == current["files"] and made == current["directory_created"]:
        return False
    text = json.dumps({"directory_created": made, "files": entries}, indent=1, sort_keys=True) + "\n"
    files.place(directory, RECORD, text, 0o600, check_mode)
    return True


def make_directory(directory, check_mode=False):
    """Make ``directory`` (0700, whatever the umask; its missing parents too, as ``files.place`` makes them) unless
    it is there, in one step (mkdir: a directory made by someone else meanwhile is never taken for modak's); True
    when this call made it. The directory, made or found, must be one that nobody else can change
    (``path_trust.others_may_change``): a job script placed there is submitted by its path (OutputError otherwise)."""
    parent, name = os.path.split(os.path.abspath(directory))
    if not name:
        raise OutputError("refusing to make the directory %s" % directory)
    parent_fd = files.open_directory(parent, create=not check_mode)
    if parent_fd is None:
        return True                                   # check mode: the parent is missing, so is the directory
    made = False
    try:
        if not check_mode:
            try:
                os.mkdir(name, 0o700, dir_fd=parent_fd)
                made = True
            except FileExistsError:
                pass
        elif files.kind(parent_fd, name) is None:
            return True
    finally:
        os.close(parent_fd)
    dir_fd = files.open_directory(directory)
    if dir_fd is None:
        raise OutputError("cannot open the directory %s: it was removed meanwhile" % directory)
    try:
        why = path_trust.others_may_change(os.fstat(dir_fd), dir_fd)
    finally:
        os.close(dir_fd)
    if why:
        raise OutputError("refusing the directory %s: %s, so they could replace what modak puts there before it is "
                          "used (make it yours and closed to others, or choose another one; docs/containers.md)"
                          % (directory, why))
    return made


def remove(directory, names=None, check_mode=False):
    """Remove what the record of ``directory`` lists (of ``names`` only, when given: several creates may share a
    directory, each deleting its own) and still holds what modak wrote, then the record once it lists nothing, and
    the directory when modak made it and nothing else is left; (removed paths, kept paths). Everything is done from
    one descriptor of the directory, opened once (``files.remove_if_holds``), never through its path again."""
    dir_fd = files.open_directory(directory)
    if dir_fd is None:
        return [], []
    try:
        return _remove(dir_fd, directory, names, check_mode)
    finally:
        os.close(dir_fd)


def _remove(dir_fd, directory, names, check_mode):
    current = _load_fd(dir_fd, directory)
    removed, kept = [], []
    chosen = current["files"] if names is None else dict(
        (name, digest) for name, digest in current["files"].items() if name in names)
    for name, digest in sorted(chosen.items()):
        outcome = files.remove_if_holds(dir_fd, name, digest, check_mode)
        if outcome == files.REMOVED:
            removed.append(os.path.join(directory, name))
        elif outcome == files.KEPT:
            kept.append(os.path.join(directory, name))
    # what the record keeps: the files of the other creates (a kept, edited file is no longer what modak wrote)
    left_recorded = dict((name, digest) for name, digest in current["files"].items() if name not in chosen)
    if left_recorded and left_recorded != current["files"]:      # another create's files stay recorded
        text = json.dumps({"directory_created": current["directory_created"], "files": left_recorded}, indent=1,
                          sort_keys=True) + "\n"
        files.place(directory, RECORD, text, 0o600, check_mode)
    elif not left_recorded and files.kind(dir_fd, RECORD) is not None:
        if not check_mode:
            os.unlink(RECORD, dir_fd=dir_fd)            # checked by _load_fd: a regular file of this user's
        removed.append(os.path.join(directory, RECORD))
    if current["directory_created"] and not kept and not left_recorded:
        left = set(os.listdir(dir_fd)) - set(os.path.basename(p) for p in removed)
        if not left and (check_mode or files.remove_directory_if_empty(directory, dir_fd)):
            removed.append(directory)
    return removed, kept
