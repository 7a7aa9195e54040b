"""Hostile DSL documents through ansible-playbook: refused fast, with their path, and the previous script kept."""

from __future__ import annotations

import base64
import os
import time

from test_optimise_module import run_module

VERSION_DOC = """job:
  application: {executable: python3 train.py}
  target: {job_scheduler_type: slurm}
  optimisation:
    app_type: ai_training
    opt_build: {cpu_type: x86}
    app_type-ai_training:
      config: {ai_framework: pytorch}
      ai_framework-pytorch: {version: "%s!"}
"""


def test_a_1_mib_version_string_is_refused_in_seconds(tmp_path):
    """The former version pattern took 83 s on 64 KiB of spaces and hours on 1 MiB."""
    dsl_file = tmp_path / "long.yaml"
    dsl_file.write_text(VERSION_DOC % (" " * (1024 * 1024 - 400)))
    start = time.monotonic()
    proc, _data, _out = run_module(tmp_path, "-e", "dsl_file=%s" % dsl_file, expect_rc=2)
    assert time.monotonic() - start < 60
    assert "ai_framework-pytorch.version: is too long" in proc.stdout


def test_a_binary_environment_key_fails_the_task_before_the_previous_script_is_replaced(tmp_path):
    canary = tmp_path / "canary"
    good = tmp_path / "good.yaml"
    good.write_text("job:\n  job_options: {job_name: keep}\n  application:\n    executable: ./app\n"
                    "    environment: {A: '1'}\n  target: {job_scheduler_type: slurm}\n")
    _p, first, out = run_module(tmp_path, "-e", "dsl_file=%s" % good)
    script = out / "keep.sbatch"
    before = script.read_bytes()
    # !!binary of b"'$(touch <canary>)'": it became  export b"'$(touch ...)'"=1  and ran with the script
    key = base64.b64encode(("'$(touch %s)'" % canary).encode()).decode()
    bad = tmp_path / "bad.yaml"
    bad.write_text("job:\n  job_options: {job_name: keep}\n  application:\n    executable: ./app\n"
                   "    environment:\n      !!binary %s: 1\n      0: zero\n  target: {job_scheduler_type: slurm}\n"
                   % key)
    proc, _data, _out = run_module(tmp_path, "-e", "dsl_file=%s" % bad, expect_rc=2)
    assert "job.application.environment" in proc.stdout and "must be text" in proc.stdout
    assert script.read_bytes() == before and first["job_script"] == str(script)
    assert sorted(os.listdir(str(out))) == ["keep.sbatch"]
    assert not canary.exists()
