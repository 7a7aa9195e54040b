"""The real workload runs two steps; the runner interleaves; the benchmark role fills a store.

torch is installed from benchmarks/requirements-bench.txt when missing (pinned CPU wheel), never skipped.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import runner  # noqa: E402

from ansible_collections.sodalite.modak.plugins.module_utils.perf import store  # noqa: E402


pytestmark = pytest.mark.usefixtures("torch_installed")     # the pinned torch, once per run (../conftest.py)


def test_workload_two_steps_emits_a_record():
    out = subprocess.run([sys.executable, runner.WORKLOAD, "--threads", "1", "--batch-size", "16", "--steps", "2",
                          "--warmup", "0", "--precision", "bf16", "--data", "digits"],
                         capture_output=True, text=True, check=True).stdout
    record = json.loads(out.strip().splitlines()[-1])
    assert record["config"] == {"threads": 1, "batch_size": 16, "precision": "bf16", "channels_last": False,
                                "compile": False, "onednn": True, "cudnn_benchmark": False}
    assert len(record["timing"]["step_times_s"]) == 2
    assert record["timing"]["first_step_s"] > 0 and record["timing"]["median_step_s"] > 0
    assert record["hardware"]["cores"] == os.cpu_count()
    assert record["versions"]["torch"].startswith("2.13.0")
    assert record["load"]["other_busy_cores"] >= 0
    assert math_finite(record["loss"]["last"])


def math_finite(value):
    return math.isfinite(value) and abs(value) < 1e6


def test_plan_is_interleaved_and_shuffled():
    configs = [{"threads": t, "batch_size": b} for t in (1, 2) for b in (32, 64, 128)]
    order = runner.plan(configs, 3, seed=1)
    assert len(order) == 18
    for rep in range(3):
        keys = [store.config_key(c) for r, c in order if r == rep]
        assert sorted(keys) == sorted(store.config_key(c) for c in configs)
    rounds = [[store.config_key(c) for r, c in order if r == rep] for rep in range(3)]
    assert len(set(map(tuple, rounds))) > 1


def test_benchmark_playbook_fills_the_store(tmp_path):
    store_path = str(tmp_path / "bench.sqlite")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                           os.path.join(ROOT, "playbooks", "benchmark.yml"),
                           "-e", json.dumps({"benchmark_store": store_path, "benchmark_reps": 2,
                                             "benchmark_steps": 2, "benchmark_warmup": 0,
                                             "benchmark_python": sys.executable,
                                             "benchmark_work_dir": str(tmp_path / "work"),
                                             "benchmark_report_dir": "",
                                             "benchmark_configs": [{"threads": 1}, {"threads": 2}]})],
                          capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = store.load(store_path)
    assert sorted(r["config"]["threads"] for r in records) == [1, 1, 2, 2]


def test_slurm_array_script(tmp_path):
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"threads": 1}, {"threads": 2}, {"precision": "bf16"}]))
    script = runner.slurm_array_script(str(configs), 3, str(tmp_path / "s.sqlite"))
    assert "#SBATCH --array=0-8" in script
    assert '--index "$SLURM_ARRAY_TASK_ID"' in script


def test_workload_ddp_mode_two_ranks_print_one_final_loss():
    """--ddp under torchrun --standalone (2 ranks, gloo): each rank prints its line with the same averaged final
    loss, and rank 0 alone writes the record."""
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1",
                          "--nproc-per-node=2", "--no-python", sys.executable, runner.WORKLOAD, "--ddp", "--threads",
                          "1", "--batch-size", "16", "--steps", "2", "--warmup", "0"],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    ranks = [dict(word.split("=", 1) for word in line.split()[1:]) for line in out.splitlines()
             if line.startswith("ddp rank=")]
    assert sorted(r["rank"] for r in ranks) == ["0", "1"]
    assert {r["world_size"] for r in ranks} == {"2"} and {r["backend"] for r in ranks} == {"gloo"}
    assert len({r["final_loss"] for r in ranks}) == 1
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(records) == 1 and records[0]["ddp"]["world_size"] == 2
    assert records[0]["ddp"]["final_loss"] == float(ranks[0]["final_loss"])
