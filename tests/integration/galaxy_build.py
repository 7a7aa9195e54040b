"""The collection as Galaxy ships it: a tarball built with ansible-galaxy from a copy of this working tree (with run
leftovers planted in it, which must stay out), installed into a temporary collections path. Used by the session
fixture ``installed`` (conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from helpers import ROOT

BIN = os.path.dirname(sys.executable)
LEFTOVERS = (".hypothesis/examples/x", "tosca/.opera/state.json", "benchmarks/results/bench.sqlite",
             "benchmarks/results/bench.sqlite-wal", "out/job.sbatch", "tests/output/robustness.json",
             "plugins/module_utils/__pycache__/dsl.cpython-311.pyc", ".pytest_cache/v/x", "changelogs/.plugin-cache.yaml")


def env(cwd, collections=None):
    """The environment of a user in ``cwd`` with no ansible.cfg (and the collections path, when given)."""
    out = dict(os.environ, PWD=str(cwd), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="False",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="False", PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    out.pop("ANSIBLE_CONFIG", None)
    if collections:
        out["ANSIBLE_COLLECTIONS_PATH"] = collections
    return out


def tracked_and_new():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                         check=True).stdout.decode()
    return [p for p in out.split("\0") if p and os.path.lexists(os.path.join(ROOT, p))]


def build_and_install(base):
    """(tarball, collections path, installed root) of a tarball built under ``base`` from a copy with leftovers."""
    source = base / "source"
    for rel in tracked_and_new():
        target = source / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(os.path.join(ROOT, rel)):
            os.symlink(os.readlink(os.path.join(ROOT, rel)), target)
        else:
            shutil.copy2(os.path.join(ROOT, rel), target)
    for rel in LEFTOVERS:
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text("leftover\n")
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(base), "."],
                   cwd=str(source), env=env(base), check=True, capture_output=True)
    tarball = next(str(base / name) for name in os.listdir(base) if name.endswith(".tar.gz"))
    collections = base / "collections"
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-p",
                    str(collections), tarball], cwd=str(base), env=env(base), check=True, capture_output=True)
    return tarball, str(collections), str(collections / "ansible_collections" / "sodalite" / "modak")
