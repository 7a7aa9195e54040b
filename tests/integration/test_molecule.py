"""The optimised_job role's molecule scenario (default driver, localhost): syntax, converge, idempotence, verify."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from helpers import ROOT


def test_molecule_scenario_of_the_optimised_job_role(tmp_path):
    venv_bin = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=venv_bin + os.pathsep + os.environ.get("PATH", ""),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"), NO_COLOR="1", ANSIBLE_NOCOLOR="1",
               MOLECULE_NO_LOG="false", MODAK_MOLECULE_DIR=str(tmp_path))
    proc = subprocess.run([os.path.join(venv_bin, "molecule"), "test"], cwd=os.path.join(ROOT, "extensions"),
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    recaps = [int(n) for n in re.findall(r"instance\s+: ok=\d+\s+changed=(\d+)", log)]
    assert len(recaps) >= 3, log[-3000:]                 # converge, idempotence, verify
    assert recaps[0] > 0, "the first converge must change something (a fresh work directory)"
    assert recaps[1] == 0, "the second converge must change nothing"
    assert "default > idempotence: Executed: Successful" in log
    assert "default > verify: Executed: Successful" in log
    assert "hello from molecule" in (tmp_path / "work" / "job.out").read_text()
