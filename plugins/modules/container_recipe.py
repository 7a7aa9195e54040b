#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: container_recipe
short_description: Write an optimised container recipe (Singularity definition file and Dockerfile) from the DSL
version_added: "0.1.0"
description:
  - Derives one recipe model from a MODAK optimisation DSL document (base image, OS packages, framework
    installed with pip at a pinned version or built from source with C(-march) for the target, math libraries,
    graph-compiler enablement, MPI, environment, labels, runscript and test section) and writes it as a
    Singularity/Apptainer definition file and/or a Dockerfile.
  - Every optimisation is described by a C(modak.<attribute>) label named like the catalog's attributes, plus
    C(modak.recipe.sha256), the hash of the recipe model, used by the P(sodalite.modak.container_build#role) role
    to skip builds of an image that already exists.
  - Every DSL value that reaches a recipe is checked against a strict pattern or quoted; no template engine is used.
  - Computes on the controller (its action plugin) and transfers only the recipe files to the managed host, through
    M(ansible.builtin.copy)'s module. With O(wheels) the module runs on the managed host, which holds the wheels.
options:
  dsl:
    description:
      - The DSL document, as a dictionary or as JSON/YAML text.
      - Exactly one of O(dsl), O(dsl_file) and O(recipe) is required.
    type: raw
  dsl_file:
    description:
      - Path of a DSL document (JSON or YAML) on the controller, looked up like M(ansible.builtin.template)'s C(src)
        (the role's C(files/) and folder, the playbook's folder), then in the folder of the playbook given to
        C(ansible-playbook), then in the project directory (the directory C(ansible-playbook) is started in, the
        project's root under AWX and ansible-runner).
    type: path
  recipe:
    description:
      - The recipe specification itself, in the catalog's C(recipe) form (C(framework), C(version), C(cpu_type),
        C(cpu_isa), C(accelerator), C(python_packages)...), as M(sodalite.modak.optimise) returns it in RV(sodalite.modak.optimise#module:build)'s
        C(recipe) for an image to build. Checked against the catalog's schema; each problem is named by its path.
    type: dict
  output_dir:
    description:
      - Directory of the managed host the recipes are written to (created when missing). Files are written
        atomically, only inside it; a symbolic link at a recipe's path is replaced, never followed.
    type: path
    required: true
  formats:
    description:
      - Which recipes to write.
    type: list
    elements: str
    choices: [singularity, docker]
    default: [singularity, docker]
  base_image:
    description:
      - Replace the base image chosen from the DSL (for example a site's mirror of C(debian:bookworm-slim), or the
        Debian base C(scripts/base-image) builds with mmdebstrap).
    type: str
  wheels:
    description:
      - A directory of wheels on the managed host (for example the pinned CPU C(torch) wheel and its dependencies,
        made with C(pip download)). Its C(*.whl) files are hard-linked (else copied) into O(output_dir)C(/wheels), the
        build context's C(wheels/); the recipe copies them into the image and installs the framework from them only
        (C(pip --no-index --find-links)) instead of the framework's own index. Each must be a regular file (a link
        among them is refused, never followed).
    type: path
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
notes:
  - Idempotent; a second run with the same input reports no change.
  - Ansible templates task arguments, so an inline O(dsl) is templated before this module runs; use O(dsl_file)
    (never templated) for documents you did not write. The module itself never evaluates a template.
seealso:
  - module: sodalite.modak.container_build_plan
requirements:
  - On the controller, PyYAML, jsonschema >= 4 and archspec.
  - On the managed host, Python only; with O(wheels) also jsonschema and archspec (the action plugin hands the module
    the recipe specification, derived on the controller).
extends_documentation_fragment:
  - sodalite.modak.site
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
- name: Write the recipes for a PyTorch training job
  sodalite.modak.container_recipe:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    output_dir: /tmp/modak/recipes

# job.yml is a DSL beside the playbook (the file lookup reads it on the controller).
- name: Only a Dockerfile, on a local base image
  sodalite.modak.container_recipe:
    dsl: "{{ lookup('ansible.builtin.file', 'job.yml') | from_yaml }}"
    output_dir: /tmp/modak/recipes
    formats: [docker]
    base_image: localhost/debian:bookworm-slim

# /opt/wheels is a directory of wheels on the host (pip download torch and its dependencies into it).
- name: PyTorch from a pinned local wheel, on the mmdebstrap base
  sodalite.modak.container_recipe:
    dsl_file: examples/pytorch-mnist-slurm.yaml
    output_dir: /tmp/modak/recipes
    formats: [docker]
    base_image: localhost/modak/debian:bookworm
    wheels: /opt/wheels
"""

RETURN = r"""
recipes:
  description: Path of each written recipe, by format.
  returned: success
  type: dict
  sample: {singularity: /tmp/modak/recipes/Singularity.def, docker: /tmp/modak/recipes/Dockerfile}
base_image:
  description: The base image of the recipe.
  returned: success
  type: str
  sample: debian:bookworm-slim
labels:
  description: The image labels, named C(modak.<catalog attribute>), with C(modak.recipe.sha256).
  returned: success
  type: dict
  sample:
    modak.framework: pytorch
    modak.version: "2.5"
    modak.recipe.sha256: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
recipe_name:
  description: Name of the image the recipe describes (also its catalog name).
  returned: success
  type: str
  sample: modak-pytorch-2.5-cpu-x86-64-v2
recipe_sha256:
  description: Hash of the recipe model; the same for every format.
  returned: success
  type: str
  sample: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
catalog_attributes:
  description: The catalog attributes the recipe gives the image.
  returned: success
  type: dict
  sample: {framework: pytorch, version: "2.5", build: optimised-pip, isa: x86-64-v2}
catalog_entry:
  description: The catalog entry of an image built from the recipe; its C(uri) is null until the image has one.
  returned: success
  type: dict
  sample: {name: modak-pytorch-2.5-cpu-x86-64-v2, uri: null, framework: pytorch, version: "2.5"}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries, require, run_and_exit
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.tasks.container_recipe import (
    ARGUMENT_SPEC, MUTUALLY_EXCLUSIVE, REQUIRED_ONE_OF, spec_of)


def run(module):
    """On the host: what the action plugin hands here when the task places wheels of a host directory."""
    params = module.params
    try:
        recipe_spec = spec_of(params)
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read dsl_file %s: %s" % (params["dsl_file"], exc))
    result = generate.write(recipe_spec, params["output_dir"], params["formats"], params["base_image"],
                            check_mode=module.check_mode, wheels=params["wheels"])
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    return result


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
        required_one_of=REQUIRED_ONE_OF,
        supports_check_mode=True,
    )
    require(module, *dsl_libraries())
    run_and_exit(module, run)


if __name__ == "__main__":
    main()
