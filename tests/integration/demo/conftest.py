"""The demo runs on the real single-node Slurm of tests/integration/slurm (its session fixture)."""

from __future__ import annotations

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _slurm_fixtures():
    spec = importlib.util.spec_from_file_location(
        "modak_slurm_fixtures", os.path.join(ROOT, "tests", "integration", "slurm", "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


slurm = _slurm_fixtures().slurm
