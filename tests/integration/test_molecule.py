"""The optimised_job role's molecule scenario (default driver, localhost): syntax, converge, idempotence, verify,
run with the command docs/scheduler.md gives (and molecule.yml repeats), from the repository root."""

from __future__ import annotations

import os
import re
import subprocess

from helpers import ROOT

SCENARIO = os.path.join(ROOT, "extensions", "molecule", "default", "molecule.yml")


def documented_command():
    """The molecule command of docs/scheduler.md; molecule.yml's comment names the same."""
    with open(os.path.join(ROOT, "docs", "scheduler.md"), encoding="utf-8") as handle:
        commands = re.findall(r"`([^`\n]*molecule test[^`\n]*)`", handle.read())
    assert len(commands) == 1, commands
    with open(SCENARIO, encoding="utf-8") as handle:
        assert "# Run from the repository root: %s " % commands[0] in handle.read()
    return commands[0]


def test_molecule_scenario_of_the_optimised_job_role(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_CONFIG", "VIRTUAL_ENV", "PYTHONPATH")}
    # molecule installs the collection into Ansible's home: a home of the test's own, not the machine's
    env.update(PWD=ROOT, ANSIBLE_HOME=str(tmp_path / "ansible-home"), NO_COLOR="1", ANSIBLE_NOCOLOR="1",
               MOLECULE_NO_LOG="false", MODAK_MOLECULE_DIR=str(tmp_path))
    proc = subprocess.run(["bash", "-c", documented_command()], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    recaps = [int(n) for n in re.findall(r"instance\s+: ok=\d+\s+changed=(\d+)", log)]
    assert len(recaps) >= 3, log[-3000:]                 # converge, idempotence, verify
    assert recaps[0] > 0, "the first converge must change something (a fresh work directory)"
    assert recaps[1] == 0, "the second converge must change nothing"
    assert "default > idempotence: Executed: Successful" in log
    assert "default > verify: Executed: Successful" in log
    assert "hello from molecule" in (tmp_path / "work" / "job.out").read_text()
    assert os.path.isdir(tmp_path / "ansible-home" / "collections" / "ansible_collections" / "sodalite" / "modak")
