"""scripts/apt-install: every apt-get of the suite and the demo goes through it. apt-get's DPkg::Lock::Timeout waits
for dpkg's lock only; a second `apt-get update` while one ran failed at once on the lists' lock (status 100), and on
a fresh machine the multi-node cluster's install failed so beside the demo's (25 tests in error)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import time

import pytest
from helpers import ROOT

APT_INSTALL = os.path.join(ROOT, "scripts", "apt-install")
LOCK = "/var/lock/modak-apt.lock"


def test_an_install_waits_for_the_one_that_runs_then_goes_on(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("apt-get runs as root")
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)           # another apt-get of the suite's, running
        started = time.monotonic()
        proc = subprocess.Popen([APT_INSTALL, "--download", str(tmp_path), "hello"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        assert proc.poll() is None                 # it waits, and does not fail on the lists' lock
        fcntl.flock(lock, fcntl.LOCK_UN)
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert time.monotonic() - started >= 3
    assert [name for name in os.listdir(str(tmp_path)) if name.startswith("hello_")]


def test_nothing_missing_takes_no_lock():
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([APT_INSTALL, "bash", "coreutils"], capture_output=True, text=True, timeout=5,
                              check=False)
    assert done.returncode == 0, done.stderr
