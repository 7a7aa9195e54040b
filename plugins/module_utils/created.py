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

import hashlib
import json
import os

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

RECORD = "modak-created.json"


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _read(directory, name):
    """The bytes of the regular file ``name`` (never through a link); None when there is none, NOT_REGULAR when
    something else is there."""
    return files.read_regular(directory, name)


def load(directory):
    """The record of ``directory``: {"directory_created": bool, "files": {name: sha256}} (empty when none)."""
    data = _read(directory, RECORD)
    record = {"directory_created": False, "files": {}}
    if data is None:
        return record
    if data is files.NOT_REGULAR:
        raise OutputError("refusing the record %s: it is not a regular file" % os.path.join(directory, RECORD))
    try:
        found = json.loads(data.decode("utf-8"))
        record["directory_created"] = found.get("directory_created") is True
        record["files"] = {files.check_filename(k): str(v) for k, v in dict(found.get("files") or {}).items()}
    except (ValueError, AttributeError, TypeError, OutputError) as exc:
        raise OutputError("cannot read the record %s: %s" % (os.path.join(directory, RECORD), exc))
    return record


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


def record(directory, names, directory_created=False, check_mode=False):
    """Record ``names`` (files modak just wrote into ``directory``) with the hash of what they hold; True when
    the record changed. ``directory_created``: modak made the directory (kept once recorded)."""
    current = load(directory)
    entries = dict(current["files"])
    for name in names:
        data = _read(directory, files.check_filename(name))
        if data is None or data is files.NOT_REGULAR:
            continue
        entries[name] = _digest(data)
    made = current["directory_created"] or bool(directory_created)
    if entries == current["files"] and made == current["directory_created"]:
        return False
    text = json.dumps({"directory_created": made, "files": entries}, indent=1, sort_keys=True) + "\n"
    files.place(directory, RECORD, text, 0o600, check_mode)
    return True


def remove(directory, names=None, check_mode=False):
    """Remove what the record of ``directory`` lists (of ``names`` only, when given: several creates may share a
    directory, each deleting its own) and still holds what modak wrote, then the record once it lists nothing, and
    the directory when modak made it and nothing else is left; (removed paths, kept paths)."""
    if not os.path.isdir(directory):
        return [], []
    current = load(directory)
    removed, kept = [], []
    chosen = current["files"] if names is None else dict(
        (name, digest) for name, digest in current["files"].items() if name in names)
    for name, digest in sorted(chosen.items()):
        data = _read(directory, name)
        path = os.path.join(directory, name)
        if data is None:
            continue
        if data is files.NOT_REGULAR or _digest(data) != digest:
            kept.append(path)
            continue
        if not check_mode:
            os.unlink(path)
        removed.append(path)
    # what the record keeps: the files of the other creates (a kept, edited file is no longer what modak wrote)
    left_recorded = dict((name, digest) for name, digest in current["files"].items() if name not in chosen)
    if left_recorded and left_recorded != current["files"]:      # another create's files stay recorded
        text = json.dumps({"directory_created": current["directory_created"], "files": left_recorded}, indent=1,
                          sort_keys=True) + "\n"
        files.place(directory, RECORD, text, 0o600, check_mode)
    elif not left_recorded and _read(directory, RECORD) is not None:
        if not check_mode:
            os.unlink(os.path.join(directory, RECORD))
        removed.append(os.path.join(directory, RECORD))
    if current["directory_created"] and not kept:
        left = set(os.listdir(directory)) - set(os.path.basename(p) for p in removed)
        if not left:
            if not check_mode:
                os.rmdir(directory)
            removed.append(directory)
    return removed, kept
