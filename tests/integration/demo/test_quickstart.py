"""docs/quickstart.md run as written, step by step, in one shell, as a newcomer would on a fresh machine: clone,
`make run`, `make demo`, then deploy.yml of the example on the demo's image. The clone is of this working tree
(github.com is not reachable here: the repository's address reads as a local clone of it)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from helpers import ROOT

DOC = os.path.join(ROOT, "docs", "quickstart.md")
GITHUB = "https://github.com/SODALITE-EU/modak"


def steps():
    """The quickstart's commands: the lines of its fenced sh blocks, in order, continuations kept."""
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    return [body for language, body in re.findall(r"^```([^\n`]*)\n(.*?)^```", text, re.S | re.M)
            if language.strip() == "sh"]


def _mirror(base):
    """A git repository of this working tree (tracked and new files), which the quickstart clones."""
    repo = base / "mirror"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for rel in filter(None, files):
        source = os.path.join(ROOT, rel)
        if not os.path.lexists(source) or (os.path.isdir(source) and not os.path.islink(source)):
            continue
        os.makedirs(os.path.dirname(os.path.join(str(repo), rel)), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), os.path.join(str(repo), rel))
        else:
            with open(source, "rb") as src, open(os.path.join(str(repo), rel), "wb") as dst:
                dst.write(src.read())
            os.chmod(os.path.join(str(repo), rel), os.stat(source).st_mode & 0o777)
    for argv in (["git", "add", "-A"], ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit",
                                        "-qm", "modak"]):
        subprocess.run(argv, cwd=str(repo), check=True, capture_output=True)
    return repo


@pytest.fixture(scope="module")
def quickstart(slurm, tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the quickstart's demo step runs as root", pytrace=False)
    base = tmp_path_factory.mktemp("quickstart")
    script = "set -euo pipefail\n" + "\n".join(steps()).replace(GITHUB, "file://%s" % _mirror(base))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return subprocess.run(["bash", "-c", script], cwd=str(base), env=env, capture_output=True, text=True,
                          timeout=3600, check=False)


def test_the_quickstart_has_the_four_steps():
    assert [s.split()[0] for s in steps()] == ["git", "make", "make", ".venv/bin/ansible-playbook"]


def test_every_step_runs_as_written_and_the_job_completed_in_its_container(quickstart):
    assert quickstart.returncode == 0, quickstart.stdout[-5000:] + quickstart.stderr[-3000:]
    out = quickstart.stdout
    assert "out/mnist-train.sbatch" in out                                           # make run
    for engine in ("charliecloud", "podman"):                                       # make demo
        assert re.search(r"demo %s: job \d+ COMPLETED \(exit 0" % engine, out), out[-4000:]
    deployed = out[out.rindex("PLAY [Choose the login node]"):]                      # step 4
    assert re.search(r'"state": "COMPLETED"', deployed) and "failed=0" in deployed, deployed[-4000:]
