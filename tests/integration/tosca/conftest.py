"""xOpera 0.7.0 for the TOSCA tests, and the real single-node Slurm of tests/integration/slurm.

The session fixture ``opera`` runs scripts/opera-venv, which creates .venv-opera (gitignored, reused on the
next run) when it is missing or out of date, and gives the environment opera needs: its bin/ on PATH (opera
runs ``ansible-playbook`` from PATH) and this checkout's collections/ as ANSIBLE_COLLECTIONS_PATH (opera
writes its own ansible.cfg, so the project's is never read).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TOSCA = os.path.join(ROOT, "tosca")
VENV = os.path.join(ROOT, ".venv-opera")


def _slurm_fixtures():
    spec = importlib.util.spec_from_file_location(
        "modak_slurm_fixtures", os.path.join(ROOT, "tests", "integration", "slurm", "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


slurm = _slurm_fixtures().slurm


class Opera(object):
    """Runs opera from .venv-opera in tosca/, with a tree callback so that failed tasks can be read."""

    def __init__(self, tree_dir):
        self.bin = os.path.join(VENV, "bin")
        self.python = os.path.join(self.bin, "python")
        self.tree_dir = tree_dir
        self.env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ.get("PATH", ""),
                        ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"),
                        ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.tree", ANSIBLE_CALLBACK_TREE_DIR=tree_dir,
                        ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_NOCOLOR="1", PYTHONWARNINGS="ignore")
        self.env.pop("ANSIBLE_CONFIG", None)
        self.env.pop("VIRTUAL_ENV", None)

    def __call__(self, *args, timeout=300):
        return subprocess.run([os.path.join(self.bin, "opera")] + list(args), cwd=TOSCA, env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def failure(self, proc):
        """opera hides a failed task's message; the tree callback keeps it."""
        notes = []
        if os.path.isdir(self.tree_dir):
            for name in sorted(os.listdir(self.tree_dir)):
                with open(os.path.join(self.tree_dir, name), encoding="utf-8") as handle:
                    notes.append(handle.read()[-3000:])
        return "rc %d\n%s\n%s\n%s" % (proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:], "\n".join(notes))


@pytest.fixture(scope="session")
def opera_venv():
    proc = subprocess.run([os.path.join(ROOT, "scripts", "opera-venv")], capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        pytest.fail("scripts/opera-venv failed (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr),
                    pytrace=False)
    return VENV


@pytest.fixture
def opera(opera_venv, tmp_path):
    return Opera(str(tmp_path / "tree"))
