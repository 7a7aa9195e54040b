"""The decomposed container benchmark in its smoke form: both images built (ch-image on the mmdebstrap base),
modak's autotuning inside modak's image, one round of every arm, the result's shape and plot.

It builds in the demo's Charliecloud storage (the fixture demo_storage), which is kept between runs: modak's image
shares every step up to the framework with the demo's image, so only its last steps are built, and the
official-style image is built once per machine (ch-image's build cache is keyed by each step's content). Needs root
(mmdebstrap); installs what it needs.
"""

from __future__ import annotations

import json
import os
import subprocess

import containers_shape
import pytest
import services
from helpers import ROOT


# benchmarks/containers installs torch into .venv when missing: once per run instead (torch_installed)
@pytest.mark.usefixtures("torch_installed")
@pytest.mark.timeout(1800)     # 250 s here on a fresh machine (2 image builds), about 30 s with the images built
def test_containers_benchmark_smoke(tmp_path, demo_storage):
    if os.geteuid() != 0:
        pytest.skip("the container benchmark builds its base with mmdebstrap as root")
    out = tmp_path / "containers.json"
    env = dict(os.environ, CH_IMAGE_STORAGE=demo_storage)
    proc = subprocess.run([os.path.join(ROOT, "benchmarks", "containers"), "--smoke", "--work",
                           str(tmp_path / "work"), "--wheel-dir", services.DEMO_WHEELS, "--output", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    data = json.loads(out.read_text())
    assert containers_shape.problems(data) == []
    assert data["smoke"] is True and data["method"]["reps"] == 1
    assert (tmp_path / "containers.png").stat().st_size > 0
    assert (tmp_path / "containers-autotune.sqlite").is_file()
    modak = data["settings"]["modak"]
    assert modak["prediction"]["context"] == "docker://" + data["images"]["modak"]
