"""The committed container benchmark result has the shape docs/performance.md reads (its numbers are not checked:
they are measurements)."""

from __future__ import annotations

import json
import os

import containers_shape
from helpers import ROOT


def test_containers_json_has_the_decomposed_shape():
    with open(os.path.join(ROOT, "benchmarks", "results", "containers.json"), encoding="utf-8") as handle:
        data = json.load(handle)
    assert containers_shape.problems(data) == []
    assert data["smoke"] is False, "the committed result is a real run, not the smoke form"
