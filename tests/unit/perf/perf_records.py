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


def measured_in(records, doc, catalog):
    """Copies of the records as runs measured inside the image optimise chooses for ``doc`` (autotuning measures
    where the job runs; runs outside that image do not count)."""
    import copy  # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher  # pylint: disable=import-outside-toplevel
    uri = matcher.choose(dsl.parse(doc), catalog).uri
    out = []
    for record in records:
        record = copy.deepcopy(record)
        record["context"] = {"image": uri}
        out.append(record)
    return out
