"""The benchmark workload checkpoints on a real signal and resumes: the final loss of an interrupted and resumed run
is the uninterrupted run's, bit for bit (benchmarks/workload/mnist_cnn.py --checkpoint-dir)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT

WORKLOAD = os.path.join(ROOT, "benchmarks", "workload", "mnist_cnn.py")
ARGS = ["--steps", "5", "--warmup", "1", "--batch-size", "8", "--threads", "1", "--seed", "3"]


def final_loss(out):
    return json.loads(out.strip().splitlines()[-1])["loss"]["last"]


def run(extra, env=None):
    proc = subprocess.run([sys.executable, WORKLOAD] + ARGS + extra, capture_output=True, text=True, timeout=300,
                          check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def whole():
    """The final loss of the uninterrupted run."""
    pytest.importorskip("torch")
    return final_loss(run([]))


def test_an_interrupted_run_resumes_to_the_same_final_loss(whole, tmp_path):
    sig = signal.SIGUSR1
    directory = str(tmp_path / "ck")
    env = dict(os.environ, MODAK_CHECKPOINT_DIR=directory)      # as job.resilience sets it
    proc = subprocess.Popen([sys.executable, WORKLOAD] + ARGS + ["--step-delay", "0.3"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    path = os.path.join(directory, "rank-0.pt")
    deadline = time.monotonic() + 240
    while not os.path.isdir(directory) and time.monotonic() < deadline:   # the model is built: training started
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 128 + sig, err
    assert "checkpoint rank=0 step=" in out and "signal=%s" % sig.name in out
    stopped = int(out.split("checkpoint rank=0 step=")[1].split()[0])
    assert 1 <= stopped < 7 and os.path.exists(path)
    assert not [name for name in os.listdir(directory) if name != "rank-0.pt"]      # no temporary file left
    resumed = run([], env=env)
    assert "resume rank=0 step=%d" % stopped in resumed
    assert final_loss(resumed) == whole


def test_checkpoints_at_intervals_without_a_signal(whole, tmp_path):
    directory = str(tmp_path / "ck")
    assert final_loss(run(["--checkpoint-dir", directory, "--checkpoint-every", "3"])) == whole
    assert os.path.exists(os.path.join(directory, "rank-0.pt"))
    again = run(["--checkpoint-dir", directory])        # resumes at step 6 of 7: one step left
    assert "resume rank=0 step=6" in again and final_loss(again) == whole
