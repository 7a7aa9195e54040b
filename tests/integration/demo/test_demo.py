"""`make demo` end to end (scripts/demo): the example's image is built from modak's recipe on the mmdebstrap
base, pushed to a TLS registry, chosen by the optimiser, and the MNIST job trains inside it under Slurm, once
with Charliecloud and once with Podman; then the TOSCA example runs the same job through xOpera. The Debian base,
Charliecloud's build cache (/var/tmp/modak-demo.ch) and the registry's storage are kept between runs.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest


@pytest.fixture(scope="module")
def demo(root, slurm, tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the demo builds images and starts Slurm and a registry: it must run as root", pytrace=False)
    work = tmp_path_factory.mktemp("demo")
    env = dict(os.environ, MODAK_DEMO_DIR=str(work))
    proc = subprocess.run([os.path.join(root, "scripts", "demo")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1500, check=False)
    return {"proc": proc, "work": work}


def test_demo_succeeds(demo):
    proc = demo["proc"]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    assert "failed=0" in proc.stdout


@pytest.mark.parametrize("engine", ["charliecloud", "podman"])
def test_job_completed_inside_the_container_and_shows_the_loss(demo, engine):
    out = demo["proc"].stdout
    match = re.search(r"demo %s: job (\d+) (\S+) \(exit (\S+)\) in (\S+): torch (\S+), loss (\S+) -> (\S+)" % engine, out)
    assert match, out[-4000:]
    _job, state, exit_code, image, torch, first, last = match.groups()
    assert state == "COMPLETED" and exit_code.startswith("0"), out[-3000:]
    assert re.match(r"^docker://127\.0\.0\.1:\d+/modak/pytorch:2\.13\.0-cpu$", image)
    assert torch == "2.13.0+cpu"
    assert float(first) > 0 and float(last) > 0


def test_the_job_scripts_run_the_engines(demo):
    out = demo["work"] / "out"
    ch = (out / "mnist-demo-charliecloud.sbatch").read_text()
    assert "ch-image pull" not in ch and 'if ! [ -d "$IMAGE" ]; then' in ch and "\nch-run --env-no-expand --set-env " in ch
    podman = (out / "mnist-demo-podman.sbatch").read_text()
    assert "podman pull" not in podman and "\npodman run --rm --network=host" in podman
    # the image was staged before submitting, by the scripts the optimiser returned (run on the login node)
    jobs = demo["work"] / "jobs"
    assert "ch-image pull 127.0.0.1:" in (jobs / "mnist-demo-charliecloud.sbatch.stage.sh").read_text()
    assert 'podman pull "$IMAGE"' in (jobs / "mnist-demo-podman.sbatch.stage.sh").read_text()
    images = os.listdir(demo["work"] / "images")
    assert len(images) == 1 and images[0].startswith("pytorch_2.13.0-cpu-"), images   # the converted directory


def test_the_tosca_example_completed_on_the_built_image(demo):
    out = demo["proc"].stdout
    match = re.search(r"tosca: job (\d+) (\S+) \(exit (\S+)\) in (\S+)", out)
    assert match, out[-4000:]
    _job, state, exit_code, image = match.groups()
    assert state == "COMPLETED" and exit_code == "0", out[-3000:]
    assert re.match(r"^docker://127\.0\.0\.1:\d+/modak/pytorch:2\.13\.0-cpu$", image)
    match = re.search(r"tosca: torch (\S+), loss (\S+) -> (\S+)", out)
    assert match and match.group(1) == "2.13.0+cpu", out[-3000:]
    assert float(match.group(2)) > 0 and float(match.group(3)) > 0
