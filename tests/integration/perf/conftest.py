"""torch for the performance tests: the pinned CPU wheel (benchmarks/requirements-bench.txt) is installed into the
suite's environment when missing, once per run (services.shared), whichever worker needs it first: two pip
installs into one environment at the same time would break it."""

from __future__ import annotations

import os
import sys

import pytest
import services
from helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import runner  # noqa: E402  pylint: disable=wrong-import-position


def _install():
    runner.ensure_torch(install=True)
    return True


@pytest.fixture(scope="session")
def torch_installed(tmp_path_factory):
    """The tests ask for the pinned torch explicitly (never skipped)."""
    with services.shared(tmp_path_factory, "torch", _install, lambda _value: None):
        yield
