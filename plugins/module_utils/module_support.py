# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules share around the core: library checks and turning core errors into task failures.

The only file of module_utils that knows an AnsibleModule; the optimiser core never imports it.
"""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, versions
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError


# the performance model's libraries: the collection's extra requirements-perf.txt
PERF_LIBRARIES = ("numpy", "scipy", "scikit-learn", "matplotlib")
PERF_EXTRA = ("the performance model (its extra: pip install -r requirements-perf.txt of the collection, "
              "or pip install 'sodalite-modak[perf]')")


def require(module, *libraries):
    """Fail the task for the first (name, missing, import traceback) whose library is missing."""
    for name, missing, error in libraries:
        if missing:
            reason = PERF_EXTRA if name in PERF_LIBRARIES else None
            module.fail_json(msg=missing_required_lib(name, reason=reason), exception=error)


def dsl_libraries():
    """The libraries reading and validating a DSL needs."""
    return (("PyYAML", dsl.yaml is None, dsl.YAML_IMPORT_ERROR),
            ("jsonschema", dsl.jsonschema is None, dsl.JSONSCHEMA_IMPORT_ERROR),
            ("packaging", versions.specifiers is None, versions.PACKAGING_IMPORT_ERROR))


def run_and_exit(module, run, errors=()):
    """Exit with ``run(module)``'s result; a DSL problem lists every problem, other core errors say why."""
    try:
        result = run(module)
    except DslInvalid as exc:
        module.fail_json(msg=str(exc), problems=[p.as_dict() for p in exc.problems])
    except (ModakError,) + tuple(errors) as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read or write: %s" % exc, exception=traceback.format_exc())
    module.exit_json(**result)
