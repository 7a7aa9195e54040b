"""docs/scheduler.md's table from DSL field to directive, per scheduler, checked against the code: every row is
rendered for every scheduler, and every cell (directives written, directives not written, or the field refused)
must hold. The table cannot drift from what modak writes."""

from __future__ import annotations

import os
import re

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

SCHEDULERS = ("slurm", "pbspro", "torque", "gridengine")


def rows():
    with open(os.path.join(ROOT, "docs", "scheduler.md")) as handle:
        text = handle.read()
    table = text.split("<!-- table: directives -->", 1)[1].split("<!-- /table -->", 1)[0]
    out = []
    for line in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        options = yaml.safe_load(re.match(r"^`([^`]*)`", cells[0]).group(1))
        for scheduler, cell in zip(SCHEDULERS, cells[1:]):
            out.append(pytest.param(options, scheduler, cell, id="%s-%s" % (cells[0].strip("`"), scheduler)))
    return out


ROWS = rows()


def test_the_table_covers_every_scheduler_and_the_new_fields():
    assert len(ROWS) >= 4 * 25
    fields = set(key for param in ROWS for key in param.values[0])
    assert {"memory_per_gpu", "memory_whole_node", "local_scratch", "placement", "parallel_environment",
            "gpu_type", "node_exclusive", "architecture_constraint", "local_scratch_resource"} <= fields


@pytest.mark.parametrize("options,scheduler,cell", ROWS)
def test_the_table_says_what_modak_writes(catalog, options, scheduler, cell):
    doc = {"job": {"job_options": dict(options), "application": {"executable": "./prog", "app_type": "mpi"},
                   "target": {"job_scheduler_type": scheduler}}}
    refused = re.match(r"^refused: (\w+(?:, \w+)*)$", cell)
    if refused:
        with pytest.raises(DslInvalid) as caught:
            pipeline.optimise(doc, catalog)
        assert sorted(p.path for p in caught.value.problems) == sorted(
            "job.job_options." + field for field in refused.group(1).split(", "))
        return
    directives = "\n".join(pipeline.optimise(doc, catalog).script.directives)
    for part in cell.split(", "):
        absent = part.startswith("no ")
        fragment = re.search(r"`([^`]*)`", part).group(1)
        assert (fragment not in directives) if absent else (fragment in directives), (part, directives)
