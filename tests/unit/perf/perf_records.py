"""Recorded benchmark records (real runs of benchmarks/workload/mnist_cnn.py on the project machine)."""

from __future__ import annotations

import glob
import os

import pytest


from ansible_collections.sodalite.modak.plugins.module_utils.perf import store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "perf", "*.jsonl")))


@pytest.fixture(scope="session")
def records():
    out = []
    for path in FIXTURES:
        out.extend(r for r in store.load(path) if store.valid(r))
    assert out, "no fixture records in tests/data/perf"
    return out


@pytest.fixture(scope="session")
def hardware(records):
    return records[0]["hardware"]
