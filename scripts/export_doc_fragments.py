"""Write plugins/doc_fragments/schedulers.py from the scheduler registry (the source).

Modules take the registry's names from this generated fragment (``extends_documentation_fragment:
sodalite.modak.schedulers``): it adds the ``choices`` of their ``scheduler`` option, and its ``NAMES``
fragment is the sentence that names every scheduler, for a module's notes. tests/unit/test_doc_fragments.py
fails when the file is out of date, and when a module's prose lists some schedulers but not all: run
`make schema`.

  scripts/export_doc_fragments.py            # print the fragment
  scripts/export_doc_fragments.py --write    # write it
  scripts/export_doc_fragments.py --check    # exit 1 when the written fragment is out of date
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry  # noqa: E402

TARGET = os.path.join(HERE, "..", "plugins", "doc_fragments", "schedulers.py")


def titles():
    """The registry's names with their titles, in the registry's order."""
    return [(d.name, d.title) for d in registry.SCHEDULERS]


def sentence(pairs):
    words = ["%s (V(%s))" % (title, name) for name, title in pairs]
    return ", ".join(words[:-1]) + " and " + words[-1]


def fragment_text():
    pairs = titles()
    return "".join([
        "# -*- coding: utf-8 -*-\n",
        "# Copyright: modak developers\n",
        "# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)\n",
        "# Generated from the scheduler registry by scripts/export_doc_fragments.py (make schema): do not edit.\n\n",
        "from __future__ import absolute_import, division, print_function\n\n",
        "__metaclass__ = type\n\n\n",
        "class ModuleDocFragment(object):\n",
        '    """The scheduler registry\'s names, for the modules\' documentation."""\n\n',
        "    # adds the registry's names as the choices of a module's scheduler option\n",
        '    DOCUMENTATION = r"""\n',
        "options:\n",
        "  scheduler:\n",
        "    choices: [%s]\n" % ", ".join(name for name, _title in pairs),
        '"""\n\n',
        "    # every scheduler, named, for a module's notes\n",
        '    NAMES = r"""\n',
        "options: {}\n",
        "notes:\n",
        "  - The schedulers are %s.\n" % sentence(pairs),
        '"""\n',
    ])


def main(argv):
    text = fragment_text()
    if "--write" in argv:
        with open(TARGET + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(TARGET + ".tmp", TARGET)
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
