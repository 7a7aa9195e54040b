"""The benchmark's job array on a real scheduler: runner.py writes it as a JobSpec with array_size, by the
scheduler's class, and each element runs its position of the shuffled plan into the shared store. Under Slurm
(--array=0-1, SLURM_ARRAY_TASK_ID) and Grid Engine (-t 1-2, SGE_TASK_ID - 1): two configurations, one
repetition, two records."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store

RUNNER = os.path.join(ROOT, "benchmarks", "runner.py")


@pytest.fixture(params=["slurm", "gridengine"])
def scheduler(request, monkeypatch):
    """The scheduler's client environment, set in this process (job_control runs its commands here)."""
    if request.param == "slurm":
        request.getfixturevalue("slurm")
    else:
        for key, value in request.getfixturevalue("gridengine").items():
            monkeypatch.setenv(key, value)
    return request.param


def test_each_array_element_runs_its_position_of_the_plan(scheduler, torch_installed, tmp_path):
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"threads": 1}, {"threads": 2}]))
    store_path = str(tmp_path / "store.sqlite")
    script = tmp_path / "bench-array.sh"
    wrote = subprocess.run([sys.executable, RUNNER, "--store", store_path, "--configs-file", str(configs),
                            "--reps", "1", "--steps", "2", "--warmup", "0", "--array-job", str(script),
                            "--scheduler", scheduler, "--no-exclusive"],   # the suite's jobs share the node
                           capture_output=True, text=True, check=True)
    assert json.loads(wrote.stdout)["elements"] == 2
    text = script.read_text()
    assert "exclusive" not in text
    result = run(Request(script=str(script), scheduler=scheduler, wait=True, wait_timeout=600, poll_interval=1,
                         chdir=str(tmp_path)))
    assert result["state"] == "COMPLETED", result
    records = store.load(store_path)
    assert sorted(r["config"]["threads"] for r in records) == [1, 2], records
