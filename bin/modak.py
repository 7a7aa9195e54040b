# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""modak validate|optimise|recipe: the collection's core as a command (see docs/cli.md); bin/modak runs it.

Works from a checkout, from an installed collection and through a symbolic link to either.
"""

from __future__ import annotations

import os
import sys


def _import_root(root):
    """The directory holding ansible_collections/sodalite/modak for this copy of the collection."""
    parts = root.split(os.sep)
    if parts[-3:-1] == ["ansible_collections", "sodalite"]:      # an installed collection
        return os.sep.join(parts[:-3]) or os.sep
    linked = os.path.join(root, "collections")                 # a checkout: collections/ links back here
    if os.path.realpath(os.path.join(linked, "ansible_collections", "sodalite", "modak")) == root:
        return linked
    return None


def main():
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    where = _import_root(root)
    if where is None:
        sys.stderr.write("modak: %s is neither a checkout nor an installed collection "
                         "(.../ansible_collections/sodalite/modak)\n" % root)
        return 2
    sys.path.insert(0, where)
    from ansible_collections.sodalite.modak.plugins.module_utils import cli
    return cli.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
