# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile this collection's module_utils once per host, not once per task.

Ansible ships a module and its module_utils to the host as a zip of Python source; Python's zipimport
compiles every imported file again on every task (about 0.1 s for the optimiser core). Importing this
module first installs a finder that loads the collection's files from that zip through a bytecode cache:
``$XDG_CACHE_HOME/modak/bytecode`` (default ``~/.cache/modak/bytecode``), one file per source, named by
the SHA-256 of the Python version and the source, so a changed file is never served stale bytecode.

The cache is used only when it is a directory of the current user that nobody else may write; entries
are written atomically; anything unusual (no home, read-only disk, a damaged entry) falls back to a plain
compile. ``MODAK_BYTECODE_CACHE=off`` in the host's environment turns the cache off. Outside a zip (a
checkout, an installed collection) nothing changes: Python's own __pycache__ already does this there.
"""

from __future__ import annotations

import _imp
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import types
import zipimport

PREFIX = "ansible_collections.sodalite.modak."
# the interpreter and its optimisation level: code compiled under -O is never served to a run without it
TAG = (sys.implementation.cache_tag or "python").encode("ascii") + importlib.util.MAGIC_NUMBER + \
    b"-O%d" % sys.flags.optimize
_LOOSE = stat.S_IWGRP | stat.S_IWOTH


def _chain_ok(path, uid):
    """``path`` and every directory above it belong to ``uid`` or root, and those others may write are sticky."""
    while True:
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if info.st_uid not in (uid, 0):
            return False
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & _LOOSE and not info.st_mode & stat.S_ISVTX:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


def _trusted(path, uid):
    """Whether nobody but ``uid`` (and root) can change what ``path`` names, along the path as written and along
    the one its links lead to: a directory of someone else above it could rename it away and put their own in
    its place (the rule ssh applies to ~/.ssh; a sticky directory such as /tmp is fine)."""
    return _chain_ok(os.path.abspath(path), uid) and _chain_ok(os.path.realpath(path), uid)


def cache_dir():
    """The cache directory, created 0700 and this user's own, or None when it is off or others could change it."""
    if os.environ.get("MODAK_BYTECODE_CACHE", "").lower() in ("off", "0", "false", "no"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    path = os.path.join(base, "modak", "bytecode")
    uid = os.getuid()
    # the trust check comes first: directories are created only below one of this user's that passes it (root
    # with another user's HOME must leave no root-owned ~/.cache there)
    existing = path
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    try:
        if existing != path and (os.lstat(existing).st_uid != uid or not _trusted(existing, uid)):
            return None
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & _LOOSE or not _trusted(path, uid):
        return None
    return path


def _read_entry(entry):
    """The code object kept in ``entry``, or None (missing, damaged, not this user's own, or others may write it)."""
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.getuid() or info.st_mode & _LOOSE or not stat.S_ISREG(info.st_mode):
            return None
        try:
            code = marshal.loads(handle.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
    return code if isinstance(code, types.CodeType) else None


def _write_entry(directory, entry, code):
    """Keep ``code`` in ``entry`` (atomically; nothing is left behind when the disk refuses)."""
    try:
        fd, partial = tempfile.mkstemp(dir=directory, prefix=".part-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(marshal.dumps(code))
        os.replace(partial, entry)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass


def load_code(directory, source, filename):
    """The code object of ``source``: from the cache when it holds this source's entry, else compiled (and kept)."""
    entry = os.path.join(directory, hashlib.sha256(TAG + source).hexdigest())
    code = _read_entry(entry)
    if code is not None:
        _imp._fix_co_filename(code, filename)   # tracebacks name this task's archive, as zipimport's would
        return code
    code = compile(source, filename, "exec", dont_inherit=True)
    _write_entry(directory, entry, code)
    return code


class _CachedLoader(importlib.abc.Loader):
    """Executes a module of the zip from cached bytecode."""

    def __init__(self, zipped, directory):
        self.zipped, self.directory = zipped, directory

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        spec = module.__spec__
        source = self.zipped.get_source(spec.name)
        code = load_code(self.directory, source.encode("utf-8"), spec.origin)
        exec(code, module.__dict__)  # pylint: disable=exec-used  # the collection's own code, compiled once

    def get_source(self, fullname):
        return self.zipped.get_source(fullname)


def _zip_importer(entry):
    importer = sys.path_importer_cache.get(entry)
    if importer is None and ".zip" in entry:
        try:
            importer = zipimport.zipimporter(entry)
        except zipimport.ZipImportError:
            return None
    return importer if isinstance(importer, zipimport.zipimporter) else None


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the collection's modules in the zip itself: zipimport's own finder compiles each module it finds
    (to learn its file name), and its loader compiles it again."""

    def __init__(self, directory):
        self.directory = directory

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX):
            return None
        tail = fullname.rpartition(".")[2]
        for entry in path or sys.path:
            importer = _zip_importer(entry)
            if importer is None:
                continue
            try:
                package = importer.is_package(fullname)
            except zipimport.ZipImportError:
                continue
            where = os.path.join(importer.archive, importer.prefix, tail)
            spec = importlib.machinery.ModuleSpec(fullname, _CachedLoader(importer, self.directory),
                                                  origin=os.path.join(where, "__init__.py") if package else where + ".py",
                                                  is_package=package)
            if package:
                spec.submodule_search_locations = [where]
            spec.has_location = True
            return spec
        return None


def install():
    """Put the finder first on sys.meta_path when this module was itself imported from a zip (once)."""
    if not isinstance(getattr(__spec__, "loader", None), zipimport.zipimporter):
        return False
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return True
    directory = cache_dir()
    if directory is None:
        return False
    sys.meta_path.insert(0, _Finder(directory))
    return True


INSTALLED = install()
