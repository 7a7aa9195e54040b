# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optimise task's arguments and result, shared by the module (on a host) and its action plugin (on the
controller, plugins/action/optimise.py)."""

from __future__ import annotations

import dataclasses
import os

from ansible_collections.sodalite.modak.plugins.module_utils import jobspec, recipe_images, secrets, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog, embedded
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

# the registry reader (with requests) loads only when a task names registries
# pylint: disable=import-outside-toplevel

ARGUMENT_SPEC = dict(
    dsl=dict(type="dict"),
    dsl_file=dict(type="path"),
    output_dir=dict(type="path"),
    catalog=dict(type="path"),
    catalog_data=dict(type="raw"),
    results_store=dict(type="path"),
    build_prefix=dict(type="str", default=recipe_images.DEFAULT_PREFIX),
    build_base_image=dict(type="str"),
    build_lookup_timeout=dict(type="float", default=5.0),
    image_dir=dict(type="path"),
    registries=dict(type="list", elements="dict", options=dict(
        url=dict(type="str", required=True),
        username=dict(type="str"),
        password=dict(type="str", no_log=True),
        token=dict(type="str", no_log=True),
        validate_certs=dict(type="bool", default=True),
        timeout=dict(type="float", default=10.0),
        repositories=dict(type="list", elements="str"),
    )),
    # the DSL's secret values, given by the action plugin so that the host's log of the module's call masks them
    secret_values=dict(type="list", elements="str", no_log=True, default=[]),
    **site_profile.TASK_OPTIONS
)
REQUIRED_ONE_OF = [("dsl", "dsl_file")]
MUTUALLY_EXCLUSIVE = [("dsl", "dsl_file"), ("catalog", "catalog_data")] + site_profile.TASK_EXCLUSIVE
JOB_SCRIPT_MODE = 0o700     # the script may hold secrets (application.secrets value, environment): its user's only
DEFAULT_OUTPUT_DIR = "~/modak-jobs"


def output_dir_of(params, result):
    """Where the job script goes: O(output_dir), else the DSL's target.work_dir, else ~/modak-jobs."""
    return params["output_dir"] or result.request.target.work_dir or DEFAULT_OUTPUT_DIR


def catalog_of(params, read_file=None):
    """The catalog file or data, plus the images discovered in the given registries; and warnings.

    ``read_file`` (path -> ImageCatalog) reads O(catalog); the default reads it where this code runs."""
    build = dict(build_prefix=params["build_prefix"], base_image=params["build_base_image"])
    if params["catalog"]:
        base = (read_file or ImageCatalog.from_file)(params["catalog"], **build)
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


def outcome(params, result, path, changed, diff=None):
    """The task's result for the pipeline's ``result`` written to ``path`` (the documented RETURN), every secret
    value of the DSL (application.secrets) masked, the script's text and ``diff`` included."""
    image, build = _image(result, params["build_lookup_timeout"], params["build_base_image"])
    out = dict(
        changed=changed,
        image=image,
        availability=image["availability"],
        build=build,
        scheduler=result.script.scheduler,
        capabilities=sorted(registry.descriptor(result.script.scheduler).capabilities),
        target=_target(result),
        job_script=path,
        job_script_content=result.script.text,
        settings=result.settings.as_dict(),
        explanation=result.explanation,
        modak_warnings=result.warnings,
        prediction=result.extra.get("prediction") or {},
        placement=result.extra.get("placement") or {},
        image_stage=result.extra.get("stage") or "",
        image_stage_job=stage_job(result, path),
    )
    if diff is not None:
        out["diff"] = diff
    return secrets.redact(out, secret_values(result))


def secret_values(result):
    """The secret values of the pipeline's ``result`` that no result, report or play output may show."""
    return secrets.values(result.request.app)


def stage_job(result, path):
    """The staging as a batch job of the job's scheduler: it runs ``<job script>.stage.sh`` from the directory it
    is submitted from; empty when there is nothing to stage or the scheduler runs jobs on the host."""
    scheduler = result.script.scheduler
    if not result.extra.get("stage") or not registry.capable(scheduler, registry.BATCH):
        return ""
    spec = jobspec.JobSpec(name="modak-stage", steps=(("bash", os.path.basename(path) + ".stage.sh"),),
                           purpose="stage the job's image once in the image directory")
    return jobspec.render(spec, scheduler)[0].text
