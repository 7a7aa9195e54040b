#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: optimise
short_description: Choose an optimised container image and write the batch job script for a MODAK DSL
version_added: "0.1.0"
description:
  - Reads a MODAK optimisation DSL (the C(job) model with C(job_options), C(application), C(target) and
    C(optimisation)), validates it and reports every problem with its path.
  - Chooses the best optimised container image from an image catalog for the framework, version, CPU and
    accelerator, and explains the choice, the runners-up and every rejected candidate.
  - Picks run settings (nodes, tasks, threads, launcher, environment) and writes the job script for Slurm,
    PBS Pro, Torque or plain bash into O(output_dir), atomically and only when its content changes.
  - No DSL value is ever evaluated as a template; values reaching the script are pattern-checked or quoted.
extends_documentation_fragment:
  - sodalite.modak.bytecode_cache
options:
  dsl:
    description:
      - The DSL document as a mapping whose only key is C(job).
      - Exactly one of O(dsl) and O(dsl_file) is required.
    type: dict
  dsl_file:
    description:
      - Path of a DSL document in JSON or YAML on the host that runs the module.
      - Exactly one of O(dsl) and O(dsl_file) is required.
    type: path
  output_dir:
    description:
      - Directory the job script is written to (created when missing). Nothing is written outside it.
    type: path
    required: true
  catalog:
    description:
      - Path of an image catalog file (YAML, the form of C(catalog/images.yaml) of this collection).
      - When neither O(catalog) nor O(catalog_data) is given, the catalog embedded in the collection is used
        (it travels with the module as data, checked and with its recipes resolved when the collection was built).
    type: path
  catalog_data:
    description:
      - The image catalog as data (a mapping with an C(images) list, or the list itself).
    type: raw
  registries:
    description:
      - OCI registries (Distribution v2 HTTP API) whose images are added to the catalog. Each image's
        C(modak.*) labels (written by the C(sodalite.modak.container_build) role) give its attributes.
      - An unreachable registry gives a warning; the catalog alone is then used.
    type: list
    elements: dict
    suboptions:
      url:
        description: Registry base URL, such as C(https://registry.example.org) or C(http://127.0.0.1:5000).
        type: str
        required: true
      username:
        description: User name for basic authentication (and for the token service of bearer authentication).
        type: str
      password:
        description: Password for O(registries[].username).
        type: str
      token:
        description: A bearer token to send as it is.
        type: str
      validate_certs:
        description: Verify the registry's TLS certificate.
        type: bool
        default: true
      timeout:
        description: Seconds to wait for each request.
        type: float
        default: 10.0
      repositories:
        description: Only these repositories (default all that the registry lists).
        type: list
        elements: str
  build_prefix:
    description:
      - Where the images of recipe-backed catalog entries are pushed when they are built, and looked up
        to tell whether they are built already. C(docker://host[:port]/namespace) of your registry (plain
        HTTP for C(localhost) and C(127.0.0.1), HTTPS otherwise), or an absolute directory of SIF files.
      - An image is named after its recipe and tagged with the first 12 digits of the recipe hash.
    type: str
    default: docker://localhost:5000/modak
  build_base_image:
    description:
      - Base image of the recipes of recipe-backed CPU entries (for example a Debian base in your own
        registry); the default is each recipe's own base. It changes the recipe hash and so the image tag.
    type: str
  build_lookup_timeout:
    description:
      - Seconds to connect to, and then to read from, the registry when looking up whether a recipe-backed
        image is built; the whole lookup ends within twice this. An unreachable registry, or a server that
        does not answer as one, counts as not built (availability C(to-build)).
    type: float
    default: 5.0
  results_store:
    description:
      - Path of a benchmark results store (SQLite, or JSON lines) on the host that runs the module, as
        written by the C(sodalite.modak.benchmark) role.
      - When the DSL states a search space (C(optimisation.tuning)), the performance model fitted on the
        records of this host's hardware class picks the configuration; without records rules pick it.
    type: path
attributes:
  check_mode:
    support: full
    description: Nothing is written; the script content is still returned.
  diff_mode:
    support: full
    description: Shows the difference between the existing and the new job script.
notes:
  - Ansible templates task arguments before any module runs. A DSL given inline through O(dsl) (in the play,
    or from plain vars or vars files) is therefore templated by Ansible, and a C(pipe) lookup inside C({{ }})
    in it runs on the controller before this module sees it. For documents you did not write, use
    O(dsl_file) (read by the module, never templated) or mark the values C(!unsafe); the module itself never
    evaluates a template.
  - Run it on the controller (C(delegate_to=localhost)) and copy the script to the cluster, as the
    C(sodalite.modak.optimised_job) role does.
requirements:
  - PyYAML
  - jsonschema >= 4
  - archspec >= 0.2.5 (CPU microarchitectures, ISA levels and compiler flags)
  - requests (for O(registries))
  - numpy and scikit-learn (for O(results_store), the performance model)
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
- name: Optimise a PyTorch training job for Slurm with the embedded catalog
  sodalite.modak.optimise:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    output_dir: out
  register: optimised

- name: Optimise with the images of a site registry added to the embedded catalog
  sodalite.modak.optimise:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    output_dir: out
    registries:
      - url: https://registry.example.org
        username: modak
        password: "{{ registry_password }}"

- name: Show the chosen image and why
  ansible.builtin.debug:
    msg: "{{ optimised.image.uri }}: {{ optimised.explanation }}"

- name: Optimise an inline DSL against a site catalog, without writing anything
  sodalite.modak.optimise:
    dsl:
      job:
        job_options: {job_name: resnet, wall_time_limit: "12:00:00", request_gpus: 1}
        application: {executable: ./resnet_benchmark.sh}
        target: {job_scheduler_type: torque}
        optimisation:
          app_type: ai_training
          opt_build: {cpu_type: x86, acc_type: nvidia}
          app_type-ai_training:
            config: {ai_framework: tensorflow}
            ai_framework-tensorflow: {version: "2.1", xla: true}
    output_dir: /tmp/modak
    catalog: /etc/modak/site-images.yaml
  check_mode: true
"""

RETURN = r"""
image:
  description: The chosen image; null values when the application runs bare (no container).
  returned: success
  type: dict
  sample:
    uri: docker://modakopt/modak:tensorflow-2.1-gpu-src
    name: modak-tensorflow-2.1-gpu-src
    framework: tensorflow
    version: 2.1.0
    accelerator: nvidia
    features: [cudnn, nccl, xla]
    source: catalog
    availability: published
    recipe: null
availability:
  description:
    - C(published) (a published reference), C(built) (a recipe-backed image already at its uri), C(to-build)
      (a recipe-backed image not built yet), or null (your container_runtime, or no container). Also in
      the image's C(availability).
  returned: success
  type: str
  sample: to-build
build:
  description:
    - For a recipe-backed image, what the C(sodalite.modak.container_build) role needs to build it; the
      C(sodalite.modak.optimised_job) role builds it before submitting when RV(availability) is C(to-build).
    - C(dsl) (the document the recipe is derived from), C(image) (the local image name), C(push_to) (the
      uri), C(recipe_sha256), C(why) (how availability was found). Empty for other images.
  returned: success
  type: dict
scheduler:
  description: The scheduler backend the script was written for (slurm, pbspro, torque or local).
  returned: success
  type: str
  sample: slurm
job_script:
  description: Path of the job script (written unless in check mode).
  returned: success
  type: str
  sample: /home/user/out/resnet.pbs
job_script_content:
  description: The full text of the job script.
  returned: success
  type: str
settings:
  description: Run settings chosen for the job.
  returned: success
  type: dict
  sample:
    nodes: 1
    tasks_per_node: null
    ranks: 1
    threads: 4
    cpus_per_task: 4
    launcher: none
    env: {OMP_NUM_THREADS: "4", OMP_PLACES: cores, OMP_PROC_BIND: close}
    gpus: 1
    gpu_vendor: nvidia
    container_engine: apptainer
target:
  description:
    - The DSL's target as the optimiser read it (defaults applied, aliases resolved), so that roles and
      playbooks need not parse the DSL again. Keys are the DSL's (C(job_scheduler_type), C(container_engine),
      C(login_host), C(work_dir), C(partition), C(image_dir), C(name)); unset values are null.
  returned: success
  type: dict
  sample:
    job_scheduler_type: slurm
    login_host: login01
    work_dir: /scratch/user/jobs
    container_engine: apptainer
explanation:
  description: Why this image and these settings, one sentence per line.
  returned: success
  type: list
  elements: str
modak_warnings:
  description:
    - What the user should know (fallbacks, assumptions, options a scheduler cannot express).
    - Each one is also shown as an Ansible warning; Ansible reserves the result key C(warnings) for that.
  returned: success
  type: list
  elements: str
prediction:
  description:
    - The performance model's advice when the DSL has C(optimisation.tuning), else empty.
    - C(config), C(source) (model or rules), C(predicted_s_per_sample), C(interval_s_per_sample),
      C(speedup_vs_default), C(default), C(env), C(args), C(hw_class), C(notes).
    - C(kept) and C(decision) - the model's best configuration is written only when its runs in the chosen image
      beat the framework default by more than their noise; otherwise the default is, and C(decision) says why.
  returned: success
  type: dict
  sample:
    source: model
    config: {threads: 2, batch_size: 128, precision: bf16, compile: false, channels_last: false, onednn: true}
    predicted_s_per_sample: 0.00072
    speedup_vs_default: 1.8
    args: [--batch-size, "128", --precision, bf16]
problems:
  description: Every problem found in an invalid DSL, each with path, message, value and hint.
  returned: failure
  type: list
  elements: dict
"""

import dataclasses

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils import bytecode  # noqa: F401 pylint: disable=unused-import
from ansible_collections.sodalite.modak.plugins.module_utils import dsl, files, pipeline, recipe_images
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog, embedded
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries, require, run_and_exit

# the registry reader (with requests) and the performance model load only when a task names registries or a store:
# a plain optimise does not pay for importing them
# pylint: disable=import-outside-toplevel


def _catalog(params):
    """The catalog file or data, plus the images discovered in the given registries; and warnings."""
    build = dict(build_prefix=params["build_prefix"], base_image=params["build_base_image"])
    if params["catalog"]:
        base = ImageCatalog.from_file(params["catalog"], **build)
    elif params["catalog_data"] is not None:
        base = ImageCatalog.from_data(params["catalog_data"], "catalog_data", **build)
    else:
        base = embedded(**build)
    images, warnings = list(base.images), []
    names = set(image.name for image in images)
    if params["registries"]:
        from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog
    for reg in params["registries"] or ():
        found, said = oci_catalog.load(reg["url"], reg["username"], reg["password"], reg["token"],
                                       reg["validate_certs"], reg["timeout"], reg["repositories"])
        warnings.extend(said)
        for image in found:
            if image.name in names:
                warnings.append("registry %s: image %s is already in the catalog; kept the catalog's" % (
                    reg["url"], image.name))
                continue
            names.add(image.name)
            images.append(image)
    return ImageCatalog(images, base.source, base.build_prefix, base.base_image), warnings


def _image(result, timeout, base_image):
    """The image fields, its availability and, for a recipe-backed image, what its build needs."""
    choice = result.choice
    info = {"uri": choice.uri, "source": choice.source, "name": None, "framework": None, "version": None,
            "accelerator": None, "features": [], "recipe": None}
    if choice.image is not None:
        info.update(choice.image.as_dict())
    info["availability"], why = recipe_images.availability(choice, timeout)
    build = {}
    if choice.image is not None and choice.image.recipe:
        build = dict(recipe_images.build_request(choice, base_image), why=why)
    return info, build


_TARGET_KEYS = {"scheduler": "job_scheduler_type", "engine": "container_engine"}


def _target(result):
    """The request's target with the DSL's key names."""
    return {_TARGET_KEYS.get(key, key): value for key, value in dataclasses.asdict(result.request.target).items()}


def run(module):
    params = module.params
    document = params["dsl"] if params["dsl"] is not None else dsl.load_file(params["dsl_file"])
    records = host = None
    if params["results_store"]:
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import store as perf_store
        records, host = perf_store.load(params["results_store"]), perf_store.local_hardware()
    images, catalog_warnings = _catalog(params)
    result = pipeline.optimise(document, images, records, host)
    result.warnings[:0] = catalog_warnings
    if not module.check_mode:
        files.ensure_dir(params["output_dir"])
    path = files.target_path(params["output_dir"], result.script.filename)
    content = result.script.text
    before = files.read_existing(path)
    changed = before != content
    if changed and not module.check_mode:
        files.write_atomic(path, content)
    image, build = _image(result, params["build_lookup_timeout"], params["build_base_image"])
    out = dict(
        changed=changed,
        image=image,
        availability=image["availability"],
        build=build,
        scheduler=result.script.scheduler,
        target=_target(result),
        job_script=path,
        job_script_content=content,
        settings=result.settings.as_dict(),
        explanation=result.explanation,
        modak_warnings=result.warnings,
        prediction=result.extra.get("prediction") or {},
    )
    if module._diff:
        out["diff"] = dict(before=before or "", after=content, before_header=path, after_header=path)
    for warning in result.warnings:
        module.warn(warning)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dsl=dict(type="dict"),
            dsl_file=dict(type="path"),
            output_dir=dict(type="path", required=True),
            catalog=dict(type="path"),
            catalog_data=dict(type="raw"),
            results_store=dict(type="path"),
            build_prefix=dict(type="str", default=recipe_images.DEFAULT_PREFIX),
            build_base_image=dict(type="str"),
            build_lookup_timeout=dict(type="float", default=5.0),
            registries=dict(type="list", elements="dict", options=dict(
                url=dict(type="str", required=True),
                username=dict(type="str"),
                password=dict(type="str", no_log=True),
                token=dict(type="str", no_log=True),
                validate_certs=dict(type="bool", default=True),
                timeout=dict(type="float", default=10.0),
                repositories=dict(type="list", elements="str"),
            )),
        ),
        required_one_of=[("dsl", "dsl_file")],
        mutually_exclusive=[("dsl", "dsl_file"), ("catalog", "catalog_data")],
        supports_check_mode=True,
    )
    require(module, *dsl_libraries())
    if module.params["registries"]:
        from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog
        require(module, ("requests", oci_catalog.requests is None, None))
    if module.params["results_store"]:
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor as perf_model
        require(module, ("scikit-learn", not perf_model.HAS_SKLEARN, perf_model.IMPORT_ERROR))
    run_and_exit(module, run)


if __name__ == "__main__":
    main()
