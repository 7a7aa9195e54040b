# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the scheduler registry's names into the files that must list them (run after registering a scheduler).

The registry (plugins/module_utils/schedulers/registry.py) is the single source. The JSON Schema is exported
by scripts/export_schema.py and the modules' choices by scripts/export_doc_fragments.py (a doc fragment); this
script rewrites the static lists that TOSCA needs:

- a list that holds an alias (pbs, none, bash) is the DSL's word list: every name and alias;
- a list that holds the fallback (local) is every name;
- any other scheduler list (a batch-only target) is every name but the fallback.

A list is a scheduler list when it holds 'slurm' and at least two other scheduler names. ``--check`` prints the files that are out of date and exits 1.
"""

from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry  # noqa: E402

FILES = (
    "tosca/library/modak/types.yaml",               # valid_values of the DSL's target and of the scheduler nodes
    "tosca/library/modak/playbooks/target_create.yml",
    "tosca/service.yaml",
    "tosca/service-hpc.yaml",
)
# 'choices: [..]', 'valid_values: [..]' and "scheduler in [..]" lists, YAML flow style
LIST = re.compile(r"(?P<head>(?:choices|valid_values): \[|scheduler in \[)(?P<items>[^\]\n]*)\]")


def words_for(items):
    quoted = "'" in items
    words = [w.strip().strip("'\"") for w in items.split(",") if w.strip()]
    if "slurm" not in words or len(set(words) & set(registry.ALL_NAMES)) < 3:
        return None  # not a list of schedulers (e.g. where an image is built: local or slurm)
    if any(w in registry.ALIASES for w in words):
        names = registry.ALL_NAMES
    elif registry.FALLBACK in words:
        names = registry.NAMES
    else:
        names = tuple(n for n in registry.NAMES if n != registry.FALLBACK)
    return ", ".join("'%s'" % n if quoted else n for n in names)


def sync(text):
    """The text with every scheduler list rewritten from the registry."""
    def replace(match):
        words = words_for(match.group("items"))
        return match.group(0) if words is None else "%s%s]" % (match.group("head"), words)
    return LIST.sub(replace, text)


def main(argv):
    stale = []
    for name in FILES:
        path = os.path.join(ROOT, name)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        new = sync(text)
        if new != text:
            stale.append(name)
            if "--check" not in argv:
                with open(path + ".tmp", "w", encoding="utf-8") as handle:
                    handle.write(new)
                os.replace(path + ".tmp", path)
    for name in stale:
        print(("out of date: " if "--check" in argv else "updated: ") + name)
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
