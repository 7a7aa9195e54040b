"""Requests that match real centres on Grid Engine: UCL's published job scripts (tests/data/centres) and modak's
script for the same DSL document are submitted held (qsub -h) and ``qstat -j`` must read the same request: the
wall time, the memory per slot, the parallel environment and its slots, the array. UCL's own resources are mapped
to the test cell first, the same way in both scripts: its per-slot ``mem`` is the standard ``h_vmem``, and
``tmpfs`` and ``gpu`` (complexes the test cell does not define) are taken out; the unit tier compares those."""

from __future__ import annotations

import os
import re
import subprocess

import centres
import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import gridengine as ge

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
FIELDS = ("hard resource_list", "parallel environment", "job-array tasks")
GE = [pytest.param(e, id=e["name"]) for e in centres.SCRIPTS if centres.scheduler_of(e) == "gridengine"]


def mapped(text):
    out = []
    for line in text.splitlines():
        if re.match(r"^#\$ (-wd |-l (tmpfs|gpu)=)", line):
            continue
        out.append(re.sub(r"^#\$ -l mem=", "#$ -l h_vmem=", line))
    return "\n".join(out) + "\n"


def normalised(fields):
    """qstat -j's resource list as a set of name=value in MiB/seconds, and the other fields as read."""
    out = dict((key, fields.get(key)) for key in FIELDS)
    resources = set()
    for item in (fields.get("hard resource_list") or "").split(","):
        name, _sep, value = item.partition("=")
        if name == "h_vmem":
            value = str(centres.megabytes(value))
        resources.add("%s=%s" % (name, value))
    out["hard resource_list"] = resources
    return out


def read(env, text, folder, name):
    script = folder / name
    script.write_text(mapped(text))
    proc = subprocess.run(["qsub", "-terse", "-h", str(script)], env=env, cwd=str(folder), capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip().split(".")[0]
    try:
        shown = subprocess.run(["qstat", "-j", job], env=env, capture_output=True, text=True, check=True).stdout
    finally:
        subprocess.run(["qdel", job], env=env, capture_output=True, check=False)
    return normalised(ge.parse_fields(shown)[0])


@pytest.mark.parametrize("entry", GE)
def test_grid_engine_reads_the_same_request_from_modaks_script_and_ucls(gridengine, tmp_path, entry):
    with open(centres.path(entry)) as handle:
        theirs = read(gridengine, handle.read(), tmp_path, "centre.sge")
    mine = read(gridengine, pipeline.optimise(centres.document(entry), CATALOG).script.text, tmp_path, "modak.sge")
    assert mine == theirs
