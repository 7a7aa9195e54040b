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
    PBS Pro, Torque, Grid Engine or plain bash into O(output_dir), atomically and only when its content changes.
  - No DSL value is ever evaluated as a template; values reaching the script are pattern-checked or quoted.
  - Computes on the controller (its action plugin, as M(ansible.builtin.template) renders there) and sends only
    the job script to the managed host, where M(sodalite.modak.output_file) places it (never through a link, a
    directory or a link to one at the path is refused). With O(results_store) the module runs on the managed host,
    which then needs the Python libraries of the performance model.
  - With C(job.placement) the module runs on the managed host too (the cluster's login node), whose scheduler says
    whether the job fits each candidate partition and when it would start there (Slurm C(sbatch --test-only));
    the runs recorded in O(results_store) predict its run time there, and the partition with the earliest
    predicted finish is written (see RV(placement)).
options:
  dsl:
    description:
      - The DSL document as a mapping whose only key is C(job).
      - Exactly one of O(dsl) and O(dsl_file) is required.
    type: dict
  dsl_file:
    description:
      - Path of a DSL document in JSON or YAML on the controller, read like M(ansible.builtin.template)'s C(src). A
        relative path is looked up in the role's C(files/) and folder and the playbook's folder, then in the folder
        of the playbook given to C(ansible-playbook), then in the project directory (the directory
        C(ansible-playbook) is started in, the project's root under AWX and ansible-runner); a missing file fails
        the task naming every place looked at. A vault-encrypted file is decrypted.
      - Exactly one of O(dsl) and O(dsl_file) is required.
    type: path
  output_dir:
    description:
      - Directory of the managed host the job script is written to (created when missing). Nothing is written
        outside it. C(~) is expanded on the host; a relative path is taken in the directory a module would run in.
      - When omitted, the DSL's C(target.work_dir), else C(~/modak-jobs) (where the
        P(sodalite.modak.optimised_job#role) role submits the job).
    type: path
  catalog:
    description:
      - Path of an image catalog file (YAML, the form of C(catalog/images.yaml) of this collection) on the
        controller, looked up like O(dsl_file).
      - When neither O(catalog) nor O(catalog_data) is given, the collection's own C(catalog/images.yaml) is read
        on the controller.
    type: path
  catalog_data:
    description:
      - The image catalog as data (a mapping with an C(images) list, or the list itself).
    type: raw
  registries:
    description:
      - OCI registries (Distribution v2 HTTP API) whose images are added to the catalog. Each image's
        C(modak.*) labels (written by the C(sodalite.modak.container_build) role) give its attributes.
      - The registries are reached from the controller (from the managed host with O(results_store)).
      - Without O(registries[].username) and O(registries[].token), the credentials of the user's C(podman login),
        C(skopeo login) or C(docker login) for the registry's host are used, from the first of
        C($REGISTRY_AUTH_FILE) (that file alone), C($XDG_RUNTIME_DIR/containers/auth.json),
        C(~/.config/containers/auth.json), C($DOCKER_CONFIG/config.json) or C(~/.docker/config.json) and
        C(~/.dockercfg) that has them (C(credHelpers) and C(credsStore) helpers are asked), on the host that
        reaches the registry.
      - An answer 429, 500, 502, 503 or 504, or a lost connection, is tried again up to 3 times (the answer's
        C(Retry-After), else 0, 1, 2 s), within each request's O(registries[].timeout).
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
        description: Seconds for each request, its retries included (the whole discovery at most ten times this).
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
  secret_values:
    description:
      - Texts to mask wherever the managed host logs this module's call (its journal). The action plugin gives the
        DSL's C(application.secrets) values here when the module runs on the host (O(results_store)); you need not.
    type: list
    elements: str
    default: []
  image_dir:
    description:
      - Directory of images on the target that the compute nodes read (a shared file system), for a DSL that
        names no C(target.image_dir); a site setting given once, for example in the group vars of the login nodes.
      - With C(target.image_fetch=staged) (the default) the image is staged there before submitting (see
        RV(image_stage)) and the job only checks that it is there.
    type: path
  build_lookup_timeout:
    description:
      - Seconds to connect to, and then to read from, the registry when looking up whether a recipe-backed
        image is built; the whole lookup ends within twice this. An unreachable registry, or a server that
        does not answer as one, counts as not built (availability C(to-build)).
    type: float
    default: 5.0
  results_store:
    description:
      - Path of a benchmark results store (SQLite, or JSON lines) on the managed host, as written by the
        C(sodalite.modak.benchmark) role. With it the module runs on the managed host (its records and its
        hardware class); the DSL and the catalog are still read on the controller and handed to it.
      - When the DSL states a search space (C(optimisation.tuning)), the performance model fitted on the
        records of this host's hardware class picks the configuration; without records rules pick it.
      - Its records of jobs (C(job_run) - elapsed seconds, nodes, partition) predict the run time of each partition of
        C(job.placement).
    type: path
attributes:
  check_mode:
    support: full
    description: Nothing is written; the script content is still returned (C(changed) from the checksum of the file
      on the host).
  diff_mode:
    support: full
    description: Shows the difference between the existing and the new job script.
notes:
  - Ansible templates task arguments before any module runs. A DSL given inline through O(dsl) (in the play,
    or from plain vars or vars files) is therefore templated by Ansible, and a C(pipe) lookup inside C({{ }})
    in it runs on the controller before this module sees it. For documents you did not write, use
    O(dsl_file) (read by the module, never templated) or mark the values C(!unsafe); the module itself never
    evaluates a template.
  - The job script is renamed into place over the previous one; a symbolic link at its path is replaced, never
    followed (as M(ansible.builtin.copy) does).
  - The C(sodalite.modak.optimised_job) role runs it on the controller (C(delegate_to=localhost)) and copies the
    script to the cluster; run on a cluster's login node, it writes the script there directly.
requirements:
  - On the controller, PyYAML, jsonschema >= 4 and archspec >= 0.2.5 (CPU microarchitectures, ISA levels and compiler
    flags); requests for O(registries).
  - On the managed host, Python only; with O(results_store) also PyYAML, jsonschema, archspec, numpy and
    scikit-learn.
extends_documentation_fragment:
  - sodalite.modak.schedulers.names
  - sodalite.modak.site
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
- name: Optimise a PyTorch training job for Slurm with the collection's catalog
  sodalite.modak.optimise:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    output_dir: out
  register: optimised

# registry_password is a variable of yours (in a vault); a registry that does not answer gives a warning, and the
# catalog alone is then used.
- name: Optimise with the images of a site registry added to the collection's catalog
  sodalite.modak.optimise:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    output_dir: out
    registries:
      - url: https://registry.example.org
        username: modak
        password: "{{ registry_password }}"

- name: Optimise with the site's defaults and fabric presets from a site profile file on the controller
  sodalite.modak.optimise:
    dsl_file: examples/sites/slingshot-gpu-pytorch-ddp.yaml
    site: examples/sites/slingshot-gpu.yaml
    output_dir: out

# Needs the inventory variable modak_site, the site profile, given once for the site's login nodes in
# inventory/group_vars/login.yml:
#   modak_site:
#     target: {job_scheduler_type: slurm, modules: [cudatoolkit], image_dir: /scratch/shared/modak/images}
#     job_options: {account: m0000, partition: gpu}
#     fabric:
#       slingshot: {environment: {NCCL_SOCKET_IFNAME: "hsn0,hsn1,hsn2,hsn3", NCCL_CROSS_NIC: "1"}}
- name: Optimise with the site profile of the inventory
  sodalite.modak.optimise:
    dsl_file: examples/pytorch-cpu-slurm.yaml
    site_profile: "{{ modak_site }}"
    output_dir: out

# optimised is the result the first task registered.
- name: Show the chosen image and why
  ansible.builtin.debug:
    msg: "{{ optimised.image.uri }}: {{ optimised.explanation }}"

# Needs the site's catalog at /etc/modak/site-images.yaml on the controller (the form of the collection's
# catalog/images.yaml).
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
  description:
    - The chosen image; null values when the application runs bare (no container).
    - C(recipe) is, for a recipe-backed image, the recipe specification it is built from (the catalog's C(recipe)
      form), also RV(build)'s C(recipe).
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
    - C(recipe) (the recipe specification, in the catalog's C(recipe) form), C(image) (the local image name), C(push_to) (the
      uri), C(recipe_sha256), C(why) (how availability was found). Empty for other images.
  returned: success
  type: dict
scheduler:
  description: The scheduler backend the script was written for (slurm, pbspro, torque, gridengine or local).
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
image_stage:
  description:
    - A bash script that stages the chosen registry image where the job reads it (pulls it, or pulls and converts
      it, into the image directory once; it prints whether the image was staged or already present). Run it on
      the login node, or in a job, before submitting; the C(sodalite.modak.optimised_job) role does.
    - Empty when there is nothing to stage (no image, a local image, or C(target.image_fetch=job)).
  returned: success
  type: str
capabilities:
  description:
    - What the job's scheduler can do, from the scheduler registry (V(batch), V(srun_steps), V(after_ok)); the
      C(sodalite.modak.optimised_job) role reads V(after_ok) to choose what its jobs wait for.
  returned: success
  type: list
  elements: str
  sample: [after_ok, batch, srun_steps]
image_stage_job:
  description:
    - The staging as a batch job for the job's scheduler (written by the same scheduler class as the job), that
      runs RV(image_stage) saved beside the job script as C(<job script>.stage.sh); the
      C(sodalite.modak.optimised_job) role submits it after an image build job, and the job after it.
    - Empty when RV(image_stage) is, or when the job runs on the host (V(local)).
  returned: success
  type: str
settings:
  description:
    - Run settings chosen for the job. C(mpi_library) is the MPI library of the program (the image's, the
      optimisation section's or C(application.mpi_library)); C(pmi) the PMI that C(srun --mpi=) names for it
      (null when no C(--mpi=) is written and the site's MpiDefault decides).
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
    mpi_library: null
    pmi: null
target:
  description:
    - The DSL's target as the optimiser read it (defaults applied, aliases resolved), so that roles and
      playbooks need not parse the DSL again. Keys are the DSL's (C(job_scheduler_type), C(container_engine),
      C(login_host), C(work_dir), C(partition), C(image_dir), C(name), C(mpi_type), C(modules), C(setup),
      C(image_fetch)); unset values are null (empty lists for C(modules) and C(setup)).
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
placement:
  description:
    - The choice of C(job.placement), else empty. C(partition) (the one written), C(decided_at) (and
      C(decided_at_s), seconds since the epoch; every C(_in_s) counts from it), C(nodes),
      C(application), C(notes) (also in RV(explanation)) and C(candidates), one per partition in the DSL's order.
    - Each candidate has C(fits) (false - the scheduler refuses the job there, with its words in C(said); null - it
      was not asked), C(start_in_s) and C(start) with C(start_from), C(run_s) and C(run_interval_s) (90 %) with
      C(run_from), and C(finish_in_s), C(finish) and C(finish_interval_s).
  returned: success
  type: dict
  sample:
    partition: slow
    candidates:
      - {partition: fast, fits: true, start_in_s: 58.0, run_s: 10.2, finish_in_s: 68.2}
      - {partition: slow, fits: true, start_in_s: 0.0, run_s: 24.8, finish_in_s: 24.8}
problems:
  description:
    - Every problem found in an invalid DSL, each with path, message, value, hint and location.
    - C(location) is C(file:line:column) of the value in O(dsl_file) (or of its parent key when the value is
      missing); null for a DSL given as O(dsl).
  returned: failure
  type: list
  elements: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.validation import check_type_path

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, files, pipeline, secrets, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.commands import ModuleRunner
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries, require, run_and_exit
from ansible_collections.sodalite.modak.plugins.module_utils.tasks.optimise import (
    ARGUMENT_SPEC, JOB_SCRIPT_MODE, MUTUALLY_EXCLUSIVE, REQUIRED_ONE_OF, catalog_of, outcome, output_dir_of,
    secret_values)

# the registry reader (with requests) and the performance model load only when a task names registries or a store:
# a plain optimise does not pay for importing them
# pylint: disable=import-outside-toplevel


def run(module):
    """On the host: what the action plugin hands here when the task needs the host's results store."""
    params = module.params
    document = params["dsl"] if params["dsl"] is not None else dsl.load_file(params["dsl_file"])
    module.no_log_values.update(secrets.document_values(document))   # masked in every result, a failure's too
    records = host = None
    if params["results_store"]:
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import store as perf_store
        records, host = perf_store.load(params["results_store"]), perf_store.local_hardware()
    images, catalog_warnings = catalog_of(params)
    if params["image_dir"]:
        document = dsl.with_target_default(document, "image_dir", params["image_dir"])
    # job.placement asks this host's scheduler when the job would start in each of its partitions
    result = pipeline.optimise(document, images, records, host, site_profile.of_task(params), ModuleRunner(module))
    result.warnings[:0] = catalog_warnings
    directory = os.path.abspath(check_type_path(output_dir_of(params, result)))
    name = result.script.filename
    path = os.path.join(directory, name)
    content = result.script.text
    before = files.read_for_diff(directory, name) if module._diff else None
    module.no_log_values.update(secret_values(result))   # masked in every result Ansible returns (invocation too)
    changed = files.place(directory, name, content, JOB_SCRIPT_MODE, module.check_mode) != files.SAME
    diff = dict(before=before, after=content, before_header=path, after_header=path) if module._diff else None
    out = outcome(params, result, path, changed, diff)
    for warning in result.warnings:
        module.warn(warning)
    return out


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        required_one_of=REQUIRED_ONE_OF,
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
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
