# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The note of every module of this collection about its bytecode cache on the host."""

    DOCUMENTATION = r"""
options: {}
notes:
  - On the host that runs it, the module keeps the compiled form of this collection's own Python files in
    C(~/.cache/modak/bytecode) (under C($XDG_CACHE_HOME) when set), so that a task does not compile them again
    from Ansible's module archive. This is the one thing written outside the task's own paths, also in check
    mode. The cache is used only when nobody but the user (and root) can change it or any directory above it;
    entries are named by the hash of the Python version and the source, written atomically, and one that is
    damaged or that others may write is compiled again. C(MODAK_BYTECODE_CACHE=off) in the host's environment
    turns it off.
"""
