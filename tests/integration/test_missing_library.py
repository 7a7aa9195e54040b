"""A library a task needs is missing where the task computes (the controller, for optimise): the task fails and
says which one, never carries on quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import ROOT

DSL = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")


def test_registries_without_requests_fail_the_task(tmp_path):
    blocked = tmp_path / "blocked" / "requests"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text('raise ImportError("requests is not installed (blocked by the test)")\n')
    book = tmp_path / "play.yml"
    book.write_text(json.dumps([{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "tasks": [{"name": "Optimise with a registry",
                   "sodalite.modak.optimise": {"dsl_file": DSL, "output_dir": str(tmp_path / "out"),
                                               "registries": [{"url": "http://127.0.0.1:9"}]}}]}]))
    # the registries are read on the controller: requests is missing in ansible-playbook's own Python
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               PYTHONPATH=str(tmp_path / "blocked"))
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(book),
                           "-e", "ansible_python_interpreter=%s" % sys.executable],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "Failed to import the required Python library (requests)" in done.stdout
    assert not (tmp_path / "out").exists()
