"""The TOSCA optimise operation's playbook, run by the real ansible-playbook: nothing lands outside output_dir."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLAYBOOK = os.path.join(ROOT, "tosca", "library", "modak", "playbooks", "optimise.yml")


def run_operation(tmp_path, job_name):
    out = tmp_path / "a" / "b" / "out"
    inputs = {"output_dir": str(out), "scheduler": "local", "target_name": "t", "login_host": "localhost",
              "work_dir": str(tmp_path / "work"), "container_engine": "", "image_dir": "", "partitions": [],
              "job_options": {"job_name": job_name}, "application": {"executable": "/bin/true"},
              "optimisation": {}}
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), PLAYBOOK,
                           "-e", json.dumps(inputs)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    written = sorted(os.path.relpath(os.path.join(d, f), str(tmp_path))
                     for d, _dirs, fs in os.walk(str(tmp_path)) for f in fs)
    return proc, written


@pytest.mark.parametrize("job_name", ["../../x", "../escaped", "a/b", "x\n", ".hidden"])
def test_a_job_name_that_leaves_output_dir_is_refused_before_anything_is_written(tmp_path, job_name):
    proc, written = run_operation(tmp_path, job_name)
    assert proc.returncode != 0, proc.stdout
    assert "job_name" in proc.stdout, proc.stdout
    assert written == [], written


def test_a_plain_job_name_writes_its_dsl_and_script_inside_output_dir(tmp_path):
    proc, written = run_operation(tmp_path, "demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "a/b/out/demo.dsl.yaml" in written and all(p.startswith("a/b/out/") for p in written), written
