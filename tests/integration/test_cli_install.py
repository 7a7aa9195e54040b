"""The `modak` command as docs/cli.md installs it: pip from the repository into a stock python3's virtual
environment (a `modak` entry point, its libraries declared), and the pre-commit hooks as pre-commit runs them
(language: python, an environment of their own) in a DSL repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT

BIN = os.path.dirname(sys.executable)
STOCK_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
PYTORCH = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")


def _run(argv, cwd, env=None, timeout=900):
    done = subprocess.run(argv, cwd=str(cwd), env=env or _env(), capture_output=True, text=True, check=False,
                          timeout=timeout)
    return done


def _env():
    env = dict(os.environ, LC_ALL="C.UTF-8", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "ANSIBLE_CONFIG"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """A git repository holding this working tree's tracked and new files, as a user clones it."""
    path = tmp_path_factory.mktemp("modak-repo")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        source = os.path.join(ROOT, rel)
        if not os.path.lexists(source) or os.path.isdir(source) and not os.path.islink(source):
            continue
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), path / rel)
        else:
            shutil.copy2(source, path / rel)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "modak"]):
        subprocess.run(argv, cwd=str(path), env=_env(), check=True, capture_output=True)
    return path


def test_pip_installs_the_command_into_a_stock_python(repository, tmp_path):
    venv = tmp_path / "venv"
    assert _run([STOCK_PYTHON, "-m", "venv", str(venv)], tmp_path).returncode == 0
    done = _run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(repository)], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        version = yaml.safe_load(handle)["version"]
    done = _run([str(venv / "bin" / "modak"), "--version"], tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "modak %s" % version, done.stderr
    done = _run([str(venv / "bin" / "modak"), "optimise", PYTORCH, "-o", "jobs"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "jobs" / "mnist-train.sbatch").is_file()
    done = _run([str(venv / "bin" / "python"), "-c", "import numpy"], tmp_path)   # the perf extra is not core
    assert done.returncode != 0


def test_the_pre_commit_hooks_fail_until_the_new_script_is_added(repository, tmp_path):
    dsls = tmp_path / "dsls"
    (dsls / "dsl").mkdir(parents=True)
    shutil.copy(PYTORCH, dsls / "dsl" / "train.yaml")
    (dsls / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(repository), "rev": "HEAD",
        "hooks": [{"id": "modak-validate", "files": "^dsl/"}, {"id": "modak-optimise", "files": "^dsl/"}]}]}))
    env = dict(_env(), PRE_COMMIT_HOME=str(tmp_path / "cache"))
    pre_commit = os.path.join(BIN, "pre-commit")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(argv, cwd=str(dsls), env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(repository), capture_output=True, text=True,
                          check=True).stdout.strip()
    (dsls / ".pre-commit-config.yaml").write_text((dsls / ".pre-commit-config.yaml").read_text().replace(
        "rev: HEAD", "rev: %s" % head))
    subprocess.run(["git", "add", "-A"], cwd=str(dsls), env=env, check=True)
    done = _run([pre_commit, "run", "--files", "dsl/train.yaml"], dsls, env)   # a new DSL, its script not added
    assert done.returncode != 0, done.stdout
    assert "git add jobs/mnist-train.sbatch" in done.stdout, done.stdout
    done = _run([pre_commit, "run", "--files", "dsl/train.yaml"], dsls, env)   # written, still untracked
    assert done.returncode != 0 and "git add jobs/mnist-train.sbatch" in done.stdout, done.stdout
    subprocess.run(["git", "add", "jobs/mnist-train.sbatch", "jobs/modak-manifest.json"], cwd=str(dsls), env=env,
                   check=True)
    done = _run([pre_commit, "run", "--files", "dsl/train.yaml"], dsls, env)
    assert done.returncode == 0, done.stdout + done.stderr
