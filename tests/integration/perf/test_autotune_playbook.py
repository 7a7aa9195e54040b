"""playbooks/autotune.yml end to end: real runs of the benchmark workload inside a DSL's search space.

torch is installed from benchmarks/requirements-bench.txt when missing (pinned CPU wheel), never skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils.perf import search, store  # noqa: E402

SPACE = {"threads": [1, 2], "precision": ["fp32", "bf16"]}


pytestmark = pytest.mark.usefixtures("torch_installed")     # the pinned torch, once per run (../conftest.py)


def playbook(tmp_path, dsl_file, store_path, max_runs, min_gain=0.02):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"), ANSIBLE_NOCOLOR="1")
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                           os.path.join(ROOT, "playbooks", "autotune.yml"),
                           "-e", json.dumps({"dsl_file": dsl_file, "results_store": store_path,
                                             "app_dir": ROOT, "app_python": sys.executable,
                                             "autotune_extra_args": ["--steps", "2", "--warmup", "0"],
                                             "autotune_max_runs": max_runs, "autotune_min_gain": min_gain,
                                             "output_dir": str(tmp_path / "out")})],
                          capture_output=True, text=True, cwd=ROOT, env=env, check=False)


def test_autotune_playbook_measures_inside_the_space_and_continues(tmp_path):
    with open(os.path.join(ROOT, "examples", "pytorch-mnist-tuning-local.yaml")) as handle:
        doc = yaml.safe_load(handle)
    doc["job"]["optimisation"]["tuning"] = SPACE
    dsl_file = tmp_path / "tuned.yaml"
    dsl_file.write_text(yaml.safe_dump(doc))
    store_path = str(tmp_path / "autotune.sqlite")
    allowed = set(store.config_key(c) for c in search.space(SPACE, {"threads": 2}))

    first = playbook(tmp_path, str(dsl_file), store_path, 3)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    everything = store.load(store_path)
    records = [r for r in everything if r["phase"] == "autotune"]
    keys = [store.config_key(r["config"]) for r in records]
    # each configuration runs 3 times (the default repeats), so a gain can be told from noise
    assert len(records) == 9 and len(set(keys)) == 3 and set(keys) <= allowed
    assert all(keys.count(key) == 3 for key in keys)
    assert all(r["timing"]["per_sample_s"] > 0 and r["load"]["other_busy_cores"] >= 0 for r in everything)
    # a choice other than the default is confirmed in 4 interleaved rounds (the default's autotune_confirm)
    confirmed = [store.config_key(r["config"]) for r in everything if r["phase"] == search.CONFIRM_PHASE]
    assert len(everything) == 9 + len(confirmed) and len(confirmed) in (0, 8)
    if confirmed:
        default, choice = confirmed[:2]
        assert default == "t2-b64-fp32-cl0-c0-dnn1" and confirmed == [default, choice, choice, default] * 2
    assert "t2-b64-fp32-cl0-c0-dnn1" in keys        # the default comes first
    assert "run budget spent (3 configurations measured)" in first.stdout
    assert "decision" in first.stdout
    # the runs were measured on this host, not in the image optimise chooses: they do not count, and optimise says
    # how to get runs that do
    assert "playbooks/autotune.yml" in first.stdout + first.stderr
    script = (tmp_path / "out").iterdir()
    assert any("OMP_NUM_THREADS" in p.read_text() for p in script if p.is_file())

    # whether the fourth configuration is expected to pay depends on the timings; with min_gain -1 every
    # untried configuration is worth a run, so the second call must measure exactly the one left
    second = playbook(tmp_path, str(dsl_file), store_path, 3, min_gain=-1.0)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    keys = [store.config_key(r["config"]) for r in store.load(store_path) if r["phase"] == "autotune"]
    assert set(keys) == allowed and len(keys) == 12   # the search continued with the one untried configuration
    assert "every allowed configuration was measured" in second.stdout
