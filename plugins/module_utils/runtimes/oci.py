# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OCI image references for runtimes that pull from registries themselves (Podman, Charliecloud)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem


def reference(uri, engine):
    """``docker://ethcscs/openmpi:3.1.3`` -> ``docker.io/ethcscs/openmpi:3.1.3`` (fully qualified, no scheme).

    Other schemes (oras://, library://, shub://) hold SIF files, which ``engine`` cannot run.
    """
    ref = uri[len("docker://"):] if uri.startswith("docker://") else uri
    if "://" in ref:
        raise DslInvalid([DslProblem(
            "job.target.container_engine", "%s runs OCI images (docker://...), not %s" % (engine, uri), engine,
            hint="choose container_engine apptainer or singularity for SIF images, or an OCI image")])
    first, sep, _rest = ref.partition("/")
    if not sep:
        ref = "docker.io/library/" + ref
    elif not ("." in first or ":" in first or first == "localhost"):
        ref = "docker.io/" + ref
    return ref


def split_bind(bind):
    """A DSL bind ``src[:dst[:opts]]`` -> (src, dst, opts); dst defaults to src."""
    parts = bind.split(":")
    src = parts[0]
    dst = parts[1] if len(parts) > 1 and parts[1] else src
    opts = ":".join(parts[2:])
    return src, dst, opts
