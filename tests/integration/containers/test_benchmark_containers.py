"""The decomposed container benchmark in its smoke form: both images built (ch-image on the mmdebstrap base),
modak's autotuning inside modak's image, one round of every arm, the result's shape and plot.

It uses its own Charliecloud storage, in the test's folder, removed when it ends (its two images and their build
cache are about 5 GB: a run on a fresh machine must not keep them to its end); scripts/base-image and apt take their
own locks, so it runs beside the other tests. Needs root (mmdebstrap); installs what it needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import containers_shape
import pytest
from helpers import ROOT


# benchmarks/containers installs torch into .venv when missing: once per run instead (torch_installed)
@pytest.mark.usefixtures("torch_installed")
def test_containers_benchmark_smoke(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the container benchmark builds its base with mmdebstrap as root")
    out = tmp_path / "containers.json"
    storage = tmp_path / "ch"
    env = dict(os.environ, CH_IMAGE_STORAGE=str(storage))
    try:
        proc = subprocess.run([os.path.join(ROOT, "benchmarks", "containers"), "--smoke", "--work",
                               str(tmp_path / "work"), "--output", str(out)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=3600, check=False)
    finally:
        shutil.rmtree(str(storage), ignore_errors=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    data = json.loads(out.read_text())
    assert containers_shape.problems(data) == []
    assert data["smoke"] is True and data["method"]["reps"] == 1
    assert (tmp_path / "containers.png").stat().st_size > 0
    assert (tmp_path / "containers-autotune.sqlite").is_file()
    modak = data["settings"]["modak"]
    assert modak["prediction"]["context"] == "docker://" + data["images"]["modak"]
