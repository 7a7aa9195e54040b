"""Shared fixtures; the helpers live in tests/helpers.py (tests import them as `helpers`)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from helpers import ROOT  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog  # noqa: E402


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def catalog():
    return ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))


def _figures():
    sys.path.insert(0, os.path.join(ROOT, "tests", "robustness"))
    import figures  # pylint: disable=import-outside-toplevel
    return figures


def pytest_sessionstart(session):
    """The robustness counters start empty on every run (on the controller when tests run in parallel)."""
    if not hasattr(session.config, "workerinput"):
        _figures().reset()


def pytest_sessionfinish(session, exitstatus):
    """Write tests/output/robustness.json; docs/robustness.md is regenerated from it by scripts/robustness_report.py
    (tests never rewrite tracked files)."""
    del exitstatus
    if not hasattr(session.config, "workerinput"):
        figures = _figures()
        found = figures.collect()
        if found:
            figures.write(found)
