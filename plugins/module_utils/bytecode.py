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

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import zipimport

PREFIX = "ansible_collections.sodalite.modak."
TAG = (sys.implementation.cache_tag or "python").encode("ascii") + importlib.util.MAGIC_NUMBER


def cache_dir():
    """The cache directory, created 0700, or None when there is none that only this user can write (or it is off)."""
    if os.environ.get("MODAK_BYTECODE_CACHE", "").lower() in ("off", "0", "false", "no"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    path = os.path.join(base, "modak", "bytecode")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not stat.S_ISDIR(info.st_mode):
        return None
    return path


def load_code(directory, source, filename):
    """The code object of ``source``: from the cache when it holds this source's entry, else compiled (and kept)."""
    entry = os.path.join(directory, hashlib.sha256(TAG + source).hexdigest())
    try:
        with open(entry, "rb") as handle:
            return marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec", dont_inherit=True)
    try:
        fd, partial = tempfile.mkstemp(dir=directory, prefix=".part-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(marshal.dumps(code))
        os.replace(partial, entry)
    except OSError:
        pass
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
