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


# the tiers: a test's folder gives its tier unless it is marked with another (scripts/test --tier <tier>)
TIERS = {
    "unit": "fast tests of the code itself, no service and no subprocess of the tool chain (tests/unit)",
    "integration": "real services, ansible-playbook runs, image builds (tests/integration)",
    "robustness": "hostile input, faults, fuzzing and linear time (tests/robustness)",
    "lint": "ansible-test sanity, ansible-lint, ansible-doc, pre-commit and other checkers (tests/lint)",
}


def pytest_configure(config):
    for tier, description in TIERS.items():
        config.addinivalue_line("markers", "%s: %s" % (tier, description))


def tier_of(path, marked=()):
    """The tier of a test in ``path`` (relative to the repository) with the tier markers ``marked``."""
    marked = [m for m in marked if m in TIERS]
    if marked:
        return marked[0]
    parts = path.replace(os.sep, "/").split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" and parts[1] in TIERS else "unit"


def pytest_collection_modifyitems(config, items):
    """Every test gets its folder's tier marker, unless it names its tier itself."""
    del config
    for item in items:
        marked = [mark.name for mark in item.iter_markers() if mark.name in TIERS]
        if not marked:
            item.add_marker(getattr(pytest.mark, tier_of(os.path.relpath(str(item.fspath), ROOT))))


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
