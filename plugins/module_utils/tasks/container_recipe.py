# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_recipe task's arguments and its DSL, shared by the module (on a host) and its action plugin (on
the controller, plugins/action/container_recipe.py)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import dsl

# the recipe formats, those of recipe/generate.py's writers (a test keeps the two equal; importing generate here
# would put every writer on the import chain of the argument spec)
FORMATS = ("singularity", "docker")

ARGUMENT_SPEC = dict(
    dsl=dict(type="raw"),
    dsl_file=dict(type="path"),
    output_dir=dict(type="path", required=True),
    formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
    base_image=dict(type="str"),
    wheels=dict(type="path"),
)
REQUIRED_ONE_OF = [("dsl", "dsl_file")]
MUTUALLY_EXCLUSIVE = [("dsl", "dsl_file")]


def document_of(params, load_file=None):
    """The DSL document of the task: O(dsl) as data or text, or O(dsl_file) read with ``load_file``."""
    if params["dsl_file"]:
        return (load_file or dsl.load_file)(params["dsl_file"])
    if isinstance(params["dsl"], (dict, list)):
        return params["dsl"]
    return dsl.loads(str(params["dsl"]))
