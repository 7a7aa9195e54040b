# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one argv runner for container builds: build, inspect, push and the build job script (any scheduler).

Command lines are argv lists (never a shell string), so tests compare them exactly. Apptainer and
Singularity cannot be installed on the development machines; their argv is what is tested.
"""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils import image_refs, jobspec, labels, shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

ENGINES = ("apptainer", "singularity", "podman", "buildah", "charliecloud")
SIF_ENGINES = ("apptainer", "singularity")
LABEL_HASH = labels.RECIPE_HASH
_IMAGE = image_refs.BUILD_TARGET
_DEST = image_refs.PUSH_TARGET
_SHA = re.compile(r"^[0-9a-f]{64}\Z")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


class BuildError(ModakError):
    """A build cannot be planned as asked."""


def _check(pattern, value, what):
    if not pattern.match(str(value)):
        raise BuildError("%s %r is not allowed (must match %s)" % (what, value, pattern.pattern))
    return str(value)


def partial_path(image):
    """Where a SIF is built before it replaces the previous one (kept if the build fails)."""
    return image + ".partial"


def build_argv(engine, recipe, image, context=".", fakeroot=False, recipe_sha256=None):
    """argv that builds ``recipe`` into ``image`` (a .sif path for Apptainer/Singularity, else a name)."""
    image = _check(_IMAGE, image, "image")
    if engine in SIF_ENGINES:
        if not image.endswith(".sif"):
            raise BuildError("%s builds a .sif file; image %r does not end in .sif" % (engine, image))
        argv = [engine, "build"]
        if fakeroot:
            argv.append("--fakeroot")
        return argv + ["--force", partial_path(image), recipe]
    labels = []
    if recipe_sha256:
        labels = ["--label", "%s=%s" % (LABEL_HASH, _check(_SHA, recipe_sha256, "recipe hash"))]
    if engine == "podman":
        return ["podman", "build", "--pull=never", "-f", recipe, "-t", image] + labels + [context]
    if engine == "buildah":
        return ["buildah", "bud", "--pull=never", "-f", recipe, "-t", image] + labels + [context]
    if engine == "charliecloud":
        return ["ch-image", "build", "--force", "-f", recipe, "-t", image, context]
    raise BuildError("unknown build engine %r (one of %s)" % (engine, ", ".join(ENGINES)))


def finalise_argv(engine, image):
    """argv that puts a finished build in place (Apptainer/Singularity), else None."""
    if engine in SIF_ENGINES:
        return ["mv", "-f", partial_path(image), image]
    return None


def inspect_argv(engine, image):
    """argv whose output contains the recipe hash of an existing image (rc != 0 when there is none)."""
    if engine in SIF_ENGINES:
        return [engine, "inspect", "--labels", image]
    if engine == "podman":
        return ["podman", "image", "inspect", "--format", '{{ index .Config.Labels "%s" }}' % LABEL_HASH, image]
    if engine == "buildah":
        return ["buildah", "inspect", "--type", "image", "--format",
                '{{ index .OCIv1.Config.Labels "%s" }}' % LABEL_HASH, image]
    if engine == "charliecloud":
        return ["ch-image", "list", image]
    raise BuildError("unknown build engine %r" % engine)


def push_argv(engine, image, dest, tls_verify=True):
    """argv that pushes ``image`` to ``dest`` (docker://registry/repo:tag, or oras:// for a SIF)."""
    dest = _check(_DEST, dest, "push destination")
    if engine in SIF_ENGINES:
        if not dest.startswith("oras://"):
            raise BuildError("a SIF is pushed to an oras:// destination, not %r" % dest)
        return [engine, "push", image, dest]
    if not dest.startswith("docker://"):
        raise BuildError("%s pushes to a docker:// destination, not %r" % (engine, dest))
    if engine == "charliecloud":
        return ["ch-image"] + ([] if tls_verify else ["--tls-no-verify"]) + ["push", image, dest[len("docker://"):]]
    tool = "buildah" if engine == "buildah" else "podman"
    return [tool, "push", "--tls-verify=%s" % ("true" if tls_verify else "false"), image, dest]


def remote_inspect_argv(dest, tls_verify=True):
    """argv printing the recipe hash of the image already at ``dest`` (docker:// only; None for oras://)."""
    dest = _check(_DEST, dest, "push destination")
    if not dest.startswith("docker://"):
        return None
    return ["skopeo", "inspect", "--tls-verify=%s" % ("true" if tls_verify else "false"), "--format",
            '{{ index .Labels "%s" }}' % LABEL_HASH, dest]


def job_script(name, steps, cpus=8, walltime="04:00:00", workdir=None, scheduler="slurm", after=(), modules=(),
               setup=()):
    """The batch job that runs the argv ``steps`` in order (for sites that forbid builds on login nodes), written
    for ``scheduler`` by its class (jobspec.py); ``after``: the jobs it waits for (jobspec.After); ``modules`` and
    ``setup``: what the site's jobs run first (the DSL's target.modules and target.setup)."""
    name = _check(_NAME, name, "job name")
    match = re.match(r"^(\d{1,3}):(\d{2}):(\d{2})\Z", walltime)
    if not match:
        raise BuildError("walltime %r is not HH:MM:SS" % walltime)
    hours, minutes, seconds = (int(part) for part in match.groups())
    spec = jobspec.JobSpec(name=name, steps=tuple(tuple(step) for step in steps if step),
                           purpose="container_build: build the image on a compute node", workdir=workdir,
                           cpus_per_task=int(cpus), walltime_s=hours * 3600 + minutes * 60 + seconds,
                           after=tuple(after), modules=tuple(modules), setup=tuple(setup))
    try:
        script, _warnings = jobspec.render(spec, scheduler)
    except (jobspec.JobSpecError, KeyError) as exc:
        raise BuildError(str(exc).strip("'\""))
    return script.text


def plan(engine, recipe, image, context=".", fakeroot=False, recipe_sha256=None, push_to=None,
         tls_verify=True, job_name="modak-build", cpus=8, walltime="04:00:00", scheduler="slurm", modules=(),
         setup=()):
    """Every command of one build, and the job script that runs them."""
    if engine not in ENGINES:
        raise BuildError("unknown build engine %r (one of %s)" % (engine, ", ".join(ENGINES)))
    for what, path in (("recipe", recipe), ("context", context)):
        if not path or shell.has_line_break(path):
            raise BuildError("%s %r is not allowed: a path without control characters or line breaks" % (what, path))
    out = {
        "build_argv": build_argv(engine, recipe, image, context, fakeroot, recipe_sha256),
        "finalise_argv": finalise_argv(engine, image),
        "inspect_argv": inspect_argv(engine, image),
        "push_argv": push_argv(engine, image, push_to, tls_verify) if push_to else None,
        "remote_inspect_argv": remote_inspect_argv(push_to, tls_verify) if push_to else None,
        "partial": partial_path(image) if engine in SIF_ENGINES else None,
    }
    out["job_script"] = job_script(job_name, [out["build_argv"], out["finalise_argv"], out["push_argv"]],
                                   cpus=cpus, walltime=walltime, workdir=context, scheduler=scheduler,
                                   modules=modules or (), setup=setup or ())
    out["job_script_suffix"] = registry.get(scheduler).extension
    return out
