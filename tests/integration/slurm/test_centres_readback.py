"""Requests that match real centres, through Slurm's own reading: the job script a centre publishes
(tests/data/centres) and modak's script for the DSL document that asks for the same thing are both submitted held,
and ``scontrol show job -o`` must read the same request from them. Site-only bits are mapped to the test cluster
first, the same way in both scripts (account and mail user dropped, partition 'debug', GPU model and node feature
the test nodes have); scripts that ask for more nodes than the test cluster has are compared in the unit tier only
(tests/unit/test_centres.py)."""

from __future__ import annotations

import re

import centres
import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog

from . import readback

CATALOG = ImageCatalog.from_file(ROOT + "/catalog/images.yaml")
CLUSTER_NODES, NODE_CPUS, NODE_GPUS = 5, 128, 4     # the DOWN nodes of tests/integration/conftest.py
# what Slurm reads back for the facts the corpus compares
FIELDS = ("NumNodes", "NumTasks", "NtasksPerN:B:S:C", "CPUs/Task", "MinMemoryCPU", "MinMemoryNode", "TresPerNode",
          "TimeLimit", "Partition", "Features", "OverSubscribe", "ArrayTaskId", "MinTmpDiskNode")
SITE_ONLY = re.compile(r"^#SBATCH (--account|--mail-user|--reservation)|^#SBATCH .*<")
# the named differences of the corpus that the test cluster cannot hold (CSC's nvme gres, Slurm's --tmp on nodes
# without temporary disk): taken out of both scripts
UNHELD = re.compile(r"^#SBATCH (--gres=nvme:|--tmp=)")


def fits(entry):
    found = entry["facts"]
    nodes = found.get("nodes") or 1
    cpus = (found.get("tasks") or nodes * (found.get("tasks_per_node") or 1)) * found.get("cpus_per_task", 1)
    return nodes <= CLUSTER_NODES and cpus <= CLUSTER_NODES * NODE_CPUS and found.get("gpus", 0) <= NODE_GPUS


SLURM = [e for e in centres.SCRIPTS if centres.scheduler_of(e) == "slurm"]
TOO_LARGE = pytest.mark.skip(reason="larger than the test cluster (unit tier only)")
CASES = [pytest.param(e, id=e["name"], marks=() if fits(e) else TOO_LARGE) for e in SLURM]


def mapped(text):
    """The script with its site-only bits mapped to the test cluster (and the '#!' line sbatch needs, which one of
    CSC's published examples lacks)."""
    out = [] if text.startswith("#!") else ["#!/bin/bash"]
    for line in text.splitlines():
        if SITE_ONLY.match(line) or UNHELD.match(line):
            continue
        line = re.sub(r"^#SBATCH (--partition=|-p )\S+", "#SBATCH --partition=debug", line)
        line = re.sub(r"gpu:(v100|a100):", "gpu:", line)
        line = re.sub(r"--constraint=a100", "--constraint=avx2", line)
        out.append(line)
    return "\n".join(out) + "\n"


def read(text, folder, name):
    script = folder / name
    script.write_text(mapped(text))
    job = readback.submit_held(str(script), str(folder))
    try:
        record = readback.show_job(job)
    finally:
        readback.cancel([job])
    return dict((key, record.get(key)) for key in FIELDS)


@pytest.mark.parametrize("entry", CASES)
def test_slurm_reads_the_same_request_from_modaks_script_and_the_centres(slurm, tmp_path, entry):
    with open(centres.path(entry)) as handle:
        theirs = read(handle.read(), tmp_path, "centre.sbatch")
    doc = centres.document(entry)
    doc["job"]["job_options"]["partition"] = "debug"
    mine = read(pipeline.optimise(doc, CATALOG).script.text, tmp_path, "modak.sbatch")
    assert mine == theirs
