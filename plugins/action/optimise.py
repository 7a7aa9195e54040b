# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.optimise: hands the module the catalog embedded in this collection."""

from __future__ import annotations

import copy
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

try:
    import yaml
except ImportError:  # pragma: no cover - ansible-core depends on PyYAML
    yaml = None

EMBEDDED_CATALOG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "catalog", "images.yaml")

_PARSED = {}


def _embedded_catalog():
    """The embedded catalog, parsed with the C loader where PyYAML has it, and kept while the process lives."""
    stamp = os.stat(EMBEDDED_CATALOG).st_mtime_ns
    if _PARSED.get("stamp") != stamp:
        with open(EMBEDDED_CATALOG, "rb") as handle:
            _PARSED["data"] = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        _PARSED["stamp"] = stamp
    return copy.deepcopy(_PARSED["data"])


class ActionModule(ActionBase):
    """Run the optimise module, giving it the embedded catalog when none is named."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        if args.get("catalog") is None and args.get("catalog_data") is None:
            if yaml is None:
                raise AnsibleActionFail("PyYAML is needed to read the embedded catalog")
            try:
                args["catalog_data"] = _embedded_catalog()
            except (IOError, OSError) as exc:
                raise AnsibleActionFail("cannot read the embedded catalog %s: %s" % (EMBEDDED_CATALOG, exc))
            except yaml.YAMLError as exc:
                raise AnsibleActionFail("the embedded catalog %s is not valid YAML: %s" % (EMBEDDED_CATALOG, exc))
        result.update(self._execute_module(module_name="sodalite.modak.optimise", module_args=args,
                                           task_vars=task_vars))
        return result
