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
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils import catalog  # noqa: E402

TARGET = os.path.join(HERE, "..", "plugins", "module_utils", "embedded_catalog.py")
SOURCE = os.path.join(HERE, "..", "catalog", "images.yaml")


def main(argv):
    with open(SOURCE, "rb") as handle:
        text = catalog.embedded_module_text(handle.read())
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
