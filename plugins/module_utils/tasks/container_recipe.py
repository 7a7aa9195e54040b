# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_recipe task's arguments and what it builds (a RecipeSpec: from a DSL, or given as it is),
shared by the module (on a host) and its action plugin (on the controller, plugins/action/container_recipe.py)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import (
    catalog, cpu, dsl, dsl_check, frameworks, site_profile)
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.model import RecipeSpec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec as recipe_spec

# the recipe formats, those of recipe/generate.py's writers (a test keeps the two equal; importing generate here
# would put every writer on the import chain of the argument spec)
FORMATS = ("singularity", "docker")

ARGUMENT_SPEC = dict(
    dsl=dict(type="raw"),
    dsl_file=dict(type="path"),
    recipe=dict(type="dict"),
    output_dir=dict(type="path", required=True),
    formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
    base_image=dict(type="str"),
    wheels=dict(type="path"),
    **site_profile.TASK_OPTIONS
)
REQUIRED_ONE_OF = [("dsl", "dsl_file", "recipe")]
MUTUALLY_EXCLUSIVE = [("dsl", "dsl_file", "recipe")] + site_profile.TASK_EXCLUSIVE


def document_of(params, load_file=None):
    """The DSL document of the task: O(dsl) as data or text, or O(dsl_file) read with ``load_file``."""
    if params["dsl_file"]:
        return (load_file or dsl.load_file)(params["dsl_file"])
    if isinstance(params["dsl"], (dict, list)):
        return params["dsl"]
    return dsl.loads(str(params["dsl"]))


def spec_from_dict(data):
    """A RecipeSpec in the catalog's ``recipe`` form (as optimise's RV(build) gives it), checked by the catalog's
    schema; DslInvalid names each problem by its path under ``recipe``."""
    found = dsl_check.schema_problems(data, catalog.RECIPE_SCHEMA, base=["recipe"]) or _meaning_problems(data)
    if found:
        raise DslInvalid(found)
    return RecipeSpec.from_dict(dict(data, **({"version": str(data["version"])} if "version" in data else {})))


def _meaning_problems(data):
    """What the catalog and the DSL refuse beyond the schema: a graph compiler the framework has no option for, a
    CPU level of another architecture than cpu_type's."""
    out = []
    known = frameworks.FRAMEWORKS.get(data.get("framework"))
    features = set(feature for feature, _description in known.switches.values()) if known else set()
    for index, compiler in enumerate(data.get("compilers") or ()):
        if data.get("framework") and compiler not in features:
            out.append(DslProblem("recipe.compilers[%d]" % index, "%s has no option for the graph compiler %s"
                                  % (data["framework"], compiler), compiler))
    arch = cpu.CPU_TYPE_ARCH.get(data.get("cpu_type") or "x86")
    for key in ("cpu_isa", "cpu_microarch"):
        value_arch = cpu.arch_of(data[key]) if data.get(key) else None
        if value_arch and value_arch != arch:
            out.append(DslProblem("recipe." + key, "is a %s value but cpu_type '%s' is %s"
                                  % (value_arch, data.get("cpu_type") or "x86", arch), data[key]))
    return out


def spec_of(params, load_file=None, load_site=None):
    """What the task builds: O(recipe) as it is, else the RecipeSpec of the DSL laid over the task's site profile
    (parsed once); ``load_file`` reads O(dsl_file), ``load_site`` O(site) (path -> Site)."""
    if params.get("recipe") is not None:
        return spec_from_dict(params["recipe"])
    return recipe_spec.spec_of(dsl.parse(document_of(params, load_file), site_profile.of_task(params, load_site)))
