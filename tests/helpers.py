"""Shared test helpers: paths of the checkout, examples, DSL builders (imported as `helpers`)."""

from __future__ import annotations

import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def collection_link(checkout):
    """The in-tree collection path of a checkout, as scripts/bootstrap (`make`) makes it: collections/ links back."""
    link = os.path.join(checkout, "collections", "ansible_collections", "sodalite", "modak")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.join("..", "..", ".."), link)


collection_link(ROOT)     # a checkout tested without `make` gets it here
sys.path.insert(0, os.path.join(ROOT, "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils import dsl  # noqa: E402

# the DSL examples, valid on their own; examples/sites/ holds site profiles and the DSLs that need them
EXAMPLES = sorted(os.path.join(ROOT, "examples", f) for f in os.listdir(os.path.join(ROOT, "examples"))
                  if os.path.isfile(os.path.join(ROOT, "examples", f)))
ORIGINAL = sorted(os.path.join(ROOT, "tests", "data", "original", f)
                  for f in os.listdir(os.path.join(ROOT, "tests", "data", "original")) if f.endswith(".json"))


def load(path):
    return dsl.load_file(path)


def ai_doc(framework="tensorflow", version=None, acc=None, scheduler="slurm", **fw_opts):
    """A minimal AI-training DSL document."""
    details = dict(fw_opts)
    if version is not None:
        details["version"] = version
    opt_build = {"cpu_type": "x86"}
    if acc:
        opt_build["acc_type"] = acc
    return {"job": {
        "job_options": {"job_name": "t"},
        "application": {"executable": "python3 train.py"},
        "target": {"job_scheduler_type": scheduler},
        "optimisation": {
            "app_type": "ai_training",
            "opt_build": opt_build,
            "app_type-ai_training": {"config": {"ai_framework": framework},
                                     "ai_framework-%s" % framework: details},
        }}}


def with_(doc, path, value):
    """Copy of ``doc`` with the dotted ``path`` set to ``value`` (None deletes)."""
    out = copy.deepcopy(doc)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value
    return out


def dump(doc):
    return json.dumps(doc, indent=1)


# a site's own images: an ORAS reference and a local SIF of an application (catalog data)
SITE_IMAGES = [
    {"name": "openmpi-sif", "kind": "mpi", "uri": "oras://ghcr.io/example/modak-sif:openmpi-4.1.6-x86-64-v4",
     "framework": "openmpi", "version": "4.1.6", "isa": "x86-64-v4",
     "mpi": {"library": "openmpi", "version": "4.1.6"}},
    {"name": "lammps-site", "kind": "application", "app": "lammps", "uri": "/apps/containers/lammps_openmpi.sif",
     "framework": "lammps", "version": "2023.8.2", "isa": "x86-64-v3",
     "mpi": {"library": "openmpi", "version": "4.1.6"}},
]


def spec_of(doc):
    """The RecipeSpec a DSL document asks for (what container_recipe renders), parsed once."""
    from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec  # pylint: disable=import-outside-toplevel
    return spec.spec_of(dsl.parse(doc))


def directory_with(path, mode, group=None):
    """Makes the directory ``path`` with ``mode`` and, when given, the group ``group`` (as root only: the test is
    skipped otherwise); returns it."""
    import pytest  # pylint: disable=import-outside-toplevel
    if group is not None and os.geteuid() != 0:
        pytest.skip("giving a directory to another gid needs root")
    path.mkdir()
    if group is not None:
        os.chown(str(path), -1, group)
    path.chmod(mode)
    return path
