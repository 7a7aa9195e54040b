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


@pytest.mark.parametrize("scheduler,directives,index", [
    ("slurm", ["#SBATCH --job-name=modak-bench", "#SBATCH --array=0-8", "#SBATCH --exclusive"],
     'MODAK_ARRAY_INDEX="$SLURM_ARRAY_TASK_ID"'),
    ("gridengine", ["#$ -N modak-bench", "#$ -t 1-9"], 'MODAK_ARRAY_INDEX="$((SGE_TASK_ID - 1))"'),
    ("pbspro", ["#PBS -N modak-bench", "#PBS -J 0-8"], 'MODAK_ARRAY_INDEX="$PBS_ARRAY_INDEX"'),
    ("torque", ["#PBS -N modak-bench", "#PBS -t 0-8"], 'MODAK_ARRAY_INDEX="$PBS_ARRAYID"')])
def test_the_array_job_is_written_by_the_schedulers_class(tmp_path, scheduler, directives, index):
    """The benchmark array was Slurm's text written by hand; it is a JobSpec with array_size, written by each
    scheduler's class (nine elements: three configurations, three repetitions)."""
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"threads": 1}, {"threads": 2}, {"precision": "bf16"}]))
    script, warnings = runner.array_job_script(str(configs), 3, str(tmp_path / "s.sqlite"), scheduler)
    text = script.text
    assert bool(warnings) == (scheduler == "gridengine"), warnings   # no portable exclusive node there
    assert all(line in text.splitlines() for line in directives), text
    assert index in text.splitlines() and "export MODAK_ARRAY_INDEX MODAK_ARRAY_JOB" in text
    assert text.rstrip().endswith("--array-element")
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0


def test_an_array_element_runs_its_position_of_the_plan(tmp_path, monkeypatch):
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"threads": 1}, {"threads": 2}]))
    ran = []
    monkeypatch.setattr(runner, "run_one", lambda config, *a, **k: ran.append(config) or {"ok": False})
    monkeypatch.setattr(runner, "ensure_torch", lambda *a, **k: None)
    monkeypatch.setenv("MODAK_ARRAY_INDEX", "3")
    monkeypatch.setenv("MODAK_ARRAY_JOB", "42")
    runner.main(["--store", str(tmp_path / "s.sqlite"), "--configs-file", str(configs), "--reps", "2",
                 "--array-element"])
    assert ran == [runner.plan([{"threads": 1}, {"threads": 2}], 2, 42)[3][1]]


def test_a_scheduler_without_arrays_is_refused(tmp_path, capsys):
    configs = tmp_path / "configs.json"
    configs.write_text("[{}]")
    with pytest.raises(SystemExit):
        runner.main(["--store", str(tmp_path / "s.sqlite"), "--configs-file", str(configs), "--array-job",
                     str(tmp_path / "a.flux"), "--scheduler", "flux"])
    assert "flux runs no job arrays" in capsys.readouterr().err


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
