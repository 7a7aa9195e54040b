"""Write plugins/module_utils/embedded_catalog.py from catalog/images.yaml (the source).

The embedded catalog travels with every optimise task as Python data, already checked against the catalog
schema and with its recipe-backed entries resolved for the default build prefix and base image, so that a
task neither parses YAML nor validates and resolves the same catalog again (a build prefix is applied at run
time; a build base image resolves the recipes again). tests/unit/test_embedded_catalog.py fails when the file
is out of date: run `make schema`.

  scripts/export_catalog.py            # print the module
  scripts/export_catalog.py --write    # write it
  scripts/export_catalog.py --check    # exit 1 when the written module is out of date
"""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collections"))

import yaml  # noqa: E402

from ansible_collections.sodalite.modak.plugins.module_utils import recipe_images  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog  # noqa: E402

TARGET = os.path.join(HERE, "..", "plugins", "module_utils", "embedded_catalog.py")
SOURCE = os.path.join(HERE, "..", "catalog", "images.yaml")


def embedded_module_text(source):
    """The text of embedded_catalog.py for the catalog file content ``source``."""
    data = yaml.safe_load(source)
    ImageCatalog.from_data(data, "catalog/images.yaml")     # refuses what a task would refuse
    entries = data["images"] if isinstance(data, dict) else data
    resolved = []
    for raw in entries:
        if "recipe" not in raw:
            resolved.append(None)
            continue
        recipe = recipe_images.recipe_of(raw["recipe"])
        entry = recipe_images.resolve(raw, recipe_images.DEFAULT_PREFIX, None, "catalog/images.yaml")
        resolved.append({"entry": entry, "name": recipe.name, "sha256": recipe.sha256})
    return "".join([
        "# -*- coding: utf-8 -*-\n",
        "# Copyright: modak developers\n",
        "# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)\n",
        "# Generated from catalog/images.yaml by scripts/export_catalog.py (make schema): do not edit.\n",
        '"""The embedded image catalog as data: the entries of catalog/images.yaml, checked, and per entry the\n',
        'recipe-backed image resolved for the default build prefix (None for a published image)."""\n\n',
        "from __future__ import annotations\n\n",
        "SOURCE = 'embedded catalog (catalog/images.yaml)'\n",
        "SOURCE_SHA256 = %r\n\n" % hashlib.sha256(source).hexdigest(),
        "ENTRIES = %s\n\n" % _literal(entries),
        "RESOLVED = %s\n" % _literal(resolved),
    ])


def _literal(value, depth=0):
    """A Python literal of plain data, one item per line with hanging indents (pep8 clean, diff friendly)."""
    pad, inner = "    " * depth, "    " * (depth + 1)
    if isinstance(value, dict) and value:
        items = ["%s%r: %s" % (inner, key, _literal(value[key], depth + 1)) for key in sorted(value)]
        return "{\n%s,\n%s}" % (",\n".join(items), pad)
    if isinstance(value, list) and value:
        return "[\n%s,\n%s]" % (",\n".join(inner + _literal(item, depth + 1) for item in value), pad)
    return repr(value)


def main(argv):
    with open(SOURCE, "rb") as handle:
        text = embedded_module_text(handle.read())
    if "--write" in argv:
        with open(TARGET, "w", encoding="utf-8") as handle:
            handle.write(text)
        return 0
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as handle:
            if handle.read() != text:
                sys.stderr.write("%s is out of date: run make schema\n" % os.path.relpath(TARGET))
                return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
