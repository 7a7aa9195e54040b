"""The conformance corpus (tests/data/original/corpus): the original MODAK's documents and their verdicts.

Imported by tests as ``corpus``. ``cases(...)`` turns the manifest into pytest parameters; a document that
today's modak gets wrong because of a listed issue 10 defect carries a strict xfail mark, so that the fix
turns it into a failure (XPASS) until the mark is removed.
"""

from __future__ import annotations

import os

import pytest
import yaml

from helpers import ROOT

FOLDER = os.path.join(ROOT, "tests", "data", "original", "corpus")
with open(os.path.join(FOLDER, "manifest.yaml")) as _stream:
    MANIFEST = yaml.safe_load(_stream)["documents"]


def path(name):
    return os.path.join(FOLDER, name)


def files():
    """Every JSON document stored in the corpus folder, relative to it."""
    found = []
    for top, _dirs, names in os.walk(FOLDER):
        found.extend(os.path.relpath(os.path.join(top, n), FOLDER) for n in names if n.endswith(".json"))
    return sorted(found)


def xfail_for(defects):
    if not defects:
        return ()
    return (pytest.mark.xfail(strict=True, reason="issue 10 defect %s" % ", ".join(str(d) for d in defects)),)


def cases(verdict=None, defects_apply=True):
    """pytest params (name, entry) for the manifest's documents, optionally of one verdict."""
    out = []
    for name, entry in sorted(MANIFEST.items()):
        if verdict and entry["verdict"] != verdict:
            continue
        marks = xfail_for(entry.get("defects")) if defects_apply else ()
        out.append(pytest.param(name, entry, id=name, marks=marks))
    return out


with open(os.path.join(FOLDER, "manifest.yaml")) as _stream:
    MANIFEST_COMPARISONS = yaml.safe_load(_stream)["comparisons"]
