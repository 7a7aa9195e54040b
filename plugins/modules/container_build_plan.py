#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: container_build_plan
short_description: Plan a container image build (exact command lines and a build job script)
version_added: "0.1.0"
description:
  - Returns the argv lists that build a recipe into an image with Apptainer, Singularity, podman, buildah or
    Charliecloud, inspect an existing image for its C(modak.recipe.sha256) label, put a finished SIF in place and
    push the image (C(docker://) with podman/buildah, C(oras://) for SIF files), plus a batch job script that runs
    the build on a compute node, written for O(scheduler) by the same scheduler class as the application's job.
  - Changes nothing; the P(sodalite.modak.container_build#role) role runs the commands.
  - The plan is made on the controller (the module's action plugin); nothing runs on the managed host.
options:
  engine:
    description: Build tool.
    type: str
    choices: [apptainer, singularity, podman, buildah, charliecloud]
    required: true
  recipe:
    description:
      - Path of the recipe (definition file for Apptainer/Singularity, Dockerfile otherwise) on the host that
        runs the build commands; used as written (expand C(~) yourself).
    type: str
    required: true
  image:
    description:
      - The image to build, a C(.sif) path for Apptainer/Singularity,
        else an image name such as C(localhost/modak/x:tag).
    type: str
    required: true
  context:
    description: Build context directory (also the job script's working directory), a path of the build host.
    type: str
    default: .
  fakeroot:
    description: Build with C(--fakeroot) (Apptainer/Singularity, unprivileged users).
    type: bool
    default: false
  recipe_sha256:
    description: Hash of the recipe model, stored as the C(modak.recipe.sha256) label by podman/buildah.
    type: str
  push_to:
    description: Where to push the image, C(docker://host/repo:tag) or C(oras://host/repo:tag).
    type: str
  tls_verify:
    description: Verify the registry's TLS certificate when pushing.
    type: bool
    default: true
  job_name:
    description: Name of the build job.
    type: str
    default: modak-build
  cpus:
    description: CPUs of the build job.
    type: int
    default: 8
  walltime:
    description: Time limit of the build job, HH:MM:SS.
    type: str
    default: "04:00:00"
  scheduler:
    description:
      - The scheduler the build job script is written for.
      - The choices are the scheduler registry's (the generated fragment C(sodalite.modak.schedulers)).
    type: str
    default: slurm
  modules:
    description:
      - Environment modules the build job loads first (C(module load)), as the site's jobs do (the DSL's
        C(target.modules)).
    type: list
    elements: str
    default: []
  setup:
    description:
      - Shell the build job runs first, each text as given (C(eval), quoted), as the site's jobs do (the DSL's
        C(target.setup)), for example the site's C(PATH), proxies or a container tool's set-up.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - sodalite.modak.schedulers
  - sodalite.modak.examples
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
requirements:
  - None on the managed host (the plan is made on the controller); the build runs the engine it names (apptainer,
    singularity, podman, buildah or Charliecloud's ch-image) where the commands it returns are run.
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
- name: Plan an unprivileged Apptainer build
  sodalite.modak.container_build_plan:
    engine: apptainer
    recipe: /scratch/recipes/Singularity.def
    image: /scratch/images/modak-pytorch.sif
    fakeroot: true
    push_to: oras://registry.example.org/modak/pytorch:2.5
"""

RETURN = r"""
build_argv:
  description: The build command.
  returned: success
  type: list
  elements: str
  sample: [apptainer, build, --fakeroot, --force, /scratch/images/x.sif.partial, /scratch/recipes/Singularity.def]
finalise_argv:
  description: Moves a finished SIF over the previous one (Apptainer/Singularity only).
  returned: success
  type: list
  elements: str
  sample: [mv, -f, /scratch/images/x.sif.partial, /scratch/images/x.sif]
inspect_argv:
  description: Prints the labels of an existing image; its output holds the recipe hash when the image is current.
  returned: success
  type: list
  elements: str
  sample: [apptainer, inspect, --labels, /scratch/images/x.sif]
push_argv:
  description: The push command, or null without O(push_to).
  returned: success
  type: list
  elements: str
  sample: [apptainer, push, /scratch/images/x.sif, "oras://registry.example.org/modak/pytorch:2.5"]
remote_inspect_argv:
  description: Prints the recipe hash of the image already at O(push_to) (C(docker://) only), else null.
  returned: success
  type: list
  elements: str
  sample: [skopeo, inspect, --tls-verify=true, --format, '{{ index .Labels "modak.recipe.sha256" }}', "docker://r/x:1"]
partial:
  description: Path the SIF is built to before it replaces the previous image, or null.
  returned: success
  type: str
  sample: /scratch/images/x.sif.partial
job_script:
  description: A batch job script for O(scheduler) that runs the build, the move and the push on a compute node.
  returned: success
  type: str
  sample: "#!/bin/bash\n#SBATCH --job-name=modak-build\n..."
job_script_suffix:
  description: The file name ending of O(scheduler)'s scripts, for the job script's file.
  returned: success
  type: str
  sample: .sbatch
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.tasks.container_build_plan import ARGUMENT_SPEC, plan


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = plan(module.params)
    except ModakError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
