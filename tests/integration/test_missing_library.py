"""A library a task needs is missing where the task computes (the controller, for optimise): the task fails and
says which one, never carries on quietly."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import sysconfig

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


PERF = ("numpy", "scipy", "sklearn", "scikit_learn", "matplotlib")


def _python_without_the_extra(tmp_path):
    """A Python that sees every package of this one but the performance model's (a host without the extra)."""
    site = sysconfig.get_paths()["purelib"]
    kept = tmp_path / "kept"
    kept.mkdir()
    for name in os.listdir(site):
        if not name.lower().startswith(PERF) and not name.endswith(".pth"):
            os.symlink(os.path.join(site, name), kept / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    mine = next(iter(glob.glob(str(venv / "lib" / "python*" / "site-packages"))))
    with open(os.path.join(mine, "kept.pth"), "w", encoding="utf-8") as handle:
        handle.write(str(kept) + "\n")
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import numpy"], capture_output=True, check=False).returncode != 0
    return python


def test_the_performance_model_without_its_extra_names_the_extra(tmp_path):
    """numpy and scikit-learn missing on the host: perf_model fails and names the file of the extra."""
    python = _python_without_the_extra(tmp_path)
    book = tmp_path / "play.yml"
    book.write_text(json.dumps([{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "tasks": [{"name": "Fit", "sodalite.modak.perf_model": {"store": str(tmp_path / "none.sqlite"),
                                                                "action": "fit"}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(book),
                           "-e", "ansible_python_interpreter=%s" % python],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "requirements-perf.txt" in done.stdout, done.stdout[-2000:]


def test_the_modak_command_without_the_extra_names_it(tmp_path):
    env = dict(os.environ, MODAK_PYTHON=_python_without_the_extra(tmp_path))
    done = subprocess.run([os.path.join(ROOT, "bin", "modak"), "optimise", DSL, "-o", str(tmp_path / "jobs"),
                           "--results-store", str(tmp_path / "none.sqlite")], capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    assert done.returncode == 2 and "requirements-perf.txt" in done.stderr, done.stderr
    assert not (tmp_path / "jobs").exists()
