# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The manifest of the job scripts ``modak optimise`` wrote into an output directory, and what it finds there
that no DSL writes.

``<output dir>/modak-manifest.json`` lists each script modak wrote, the DSL that writes it (its path relative to
the output directory) and the SHA-256 of what it wrote; it is written atomically with the scripts and belongs in
git with them. A script of the directory is a stray when no DSL writes it: it is not in the manifest (added by
hand), its DSL is gone (deleted or renamed), or its DSL now writes another script (a job renamed). A script whose
content is not what modak wrote was edited by hand; its DSL is rendered again, which restores it. ``--prune``
removes strays the manifest says modak wrote, never a file it does not list."""

from __future__ import annotations

import hashlib
import json
import os

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

MANIFEST = "modak-manifest.json"


def digest(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode("utf-8")).hexdigest()


def script_suffixes():
    """The file extensions of job scripts, one per scheduler."""
    return tuple(sorted(set(registry.scheduler_class(name).extension for name in registry.NAMES)))


def load(output_dir):
    """{script name: {"dsl": path relative to output_dir, "sha256": hash}} of the manifest (empty when none). A
    manifest that is not a regular file of the user's (or root's) with one name is refused (OutputError): in a
    shared output directory, one that another user wrote could list the user's own scripts for ``--prune``."""
    dir_fd = files.open_directory(output_dir)
    if dir_fd is None:
        return {}
    try:
        data = files.read_written(dir_fd, MANIFEST, "the manifest %s" % os.path.join(output_dir, MANIFEST))
    finally:
        os.close(dir_fd)
    if data is None:
        return {}
    try:
        scripts = json.loads(data.decode("utf-8"))["scripts"]
        return {files.check_filename(name): {"dsl": str(entry["dsl"]), "sha256": str(entry["sha256"])}
                for name, entry in scripts.items()}
    except (ValueError, KeyError, TypeError, AttributeError, OutputError) as exc:
        raise OutputError("cannot read %s: %s" % (os.path.join(output_dir, MANIFEST), exc))


def dsl_key(output_dir, dsl_path):
    """The DSL's path as the manifest keeps it: relative to the output directory (whatever the working one)."""
    return os.path.relpath(os.path.abspath(dsl_path), os.path.abspath(output_dir))


def dsl_of(output_dir, entry):
    """The DSL path of a manifest entry, relative to the working directory."""
    return os.path.relpath(os.path.normpath(os.path.join(os.path.abspath(output_dir), entry["dsl"])))


def updated(manifest, output_dir, written):
    """The manifest after this run: ``written`` [(dsl path, script name, text)] replace every entry of those DSLs."""
    keys = set(dsl_key(output_dir, path) for path, _name, _text in written)
    out = {name: entry for name, entry in manifest.items() if entry["dsl"] not in keys}
    for path, name, text in written:
        out[name] = {"dsl": dsl_key(output_dir, path), "sha256": digest(text)}
    return out


def save(output_dir, manifest, check_mode=False):
    """Write the manifest (atomically); True when it changed."""
    text = json.dumps({"scripts": manifest}, indent=1, sort_keys=True) + "\n"
    return files.place(output_dir, MANIFEST, text, 0o644, check_mode) != files.SAME


def scripts_in(output_dir):
    """The job scripts (by extension) of the output directory, sorted."""
    try:
        names = os.listdir(output_dir)
    except FileNotFoundError:
        return []
    suffixes = script_suffixes()
    return sorted(n for n in names if n.endswith(suffixes) and os.path.isfile(os.path.join(output_dir, n)))


def edited(output_dir, manifest, name):
    """True when the script ``name`` is not what the manifest says modak wrote."""
    data = files.read_regular(output_dir, name)
    entry = manifest.get(name)
    return entry is not None and (data is None or data is files.NOT_REGULAR or digest(data) != entry["sha256"])


def strays(output_dir, manifest, written):
    """[(script name, why, modak's)] of the output directory that no DSL writes; ``written`` {script name: dsl
    path} is what this run's DSLs write. ``modak's``: the manifest lists it (``--prune`` may remove it)."""
    keys = {dsl_key(output_dir, path) for path in written.values()}
    out = []
    for name in scripts_in(output_dir):
        if name in written:
            continue
        entry = manifest.get(name)
        if entry is None:
            out.append((name, "no DSL writes it (not in %s: added by hand, or written before it)" % MANIFEST, False))
        elif entry["dsl"] in keys:
            out.append((name, "its DSL %s now writes another script" % dsl_of(output_dir, entry), True))
        elif not os.path.isfile(dsl_of(output_dir, entry)):
            out.append((name, "its DSL %s is gone" % dsl_of(output_dir, entry), True))
    return out


def prune(output_dir, manifest, found, check_mode=False):
    """Remove the strays ``found`` that the manifest lists and that still hold what modak wrote (one edited by
    hand since stays); the removed names."""
    removed = []
    dir_fd = files.open_directory(output_dir)
    if dir_fd is None:
        return removed
    try:
        for name, _why, ours in found:
            if not ours or name not in manifest:
                continue
            # checked and removed from one descriptor of the directory, while the name holds what modak wrote
            if files.remove_if_holds(dir_fd, name, manifest[name]["sha256"], check_mode) == files.REMOVED:
                removed.append(name)
    finally:
        os.close(dir_fd)
    return removed
