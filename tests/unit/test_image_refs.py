"""Image references have one module of patterns (module_utils/image_refs.py), which every reader uses."""

from __future__ import annotations

import os
import re

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import build_commands, image_refs, recipe_images, schema
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks


@pytest.mark.parametrize("ref, ok", [
    ("docker://tensorflow/tensorflow:2.15.0", True), ("oras://r.example.org/x:1", True), ("library://a/b/c:1", True),
    ("images/x.sif", True), ("ethcscs/openmpi:3.1.3", True), ("", True),
    ("docker://a b", False), ("docker://a\nb", False), ("x;id", False), ("-rm", False),
])
def test_the_reference_pattern(ref, ok):
    assert bool(re.search(image_refs.REFERENCE, ref)) is ok
    assert schema.IMAGE_REF == image_refs.REFERENCE


@pytest.mark.parametrize("pattern, text, ok", [
    (image_refs.NAME, "localhost/modak/debian:bookworm", True), (image_refs.NAME, "/abs/path", False),
    (image_refs.BUILD_TARGET, "/scratch/images/x.sif", True), (image_refs.BUILD_TARGET, "localhost/m/x:1", True),
    (image_refs.BUILD_TARGET, "x y", False), (image_refs.PUSH_TARGET, "docker://r:5000/m/x:1", True),
    (image_refs.PUSH_TARGET, "oras://r/m/x:1", True), (image_refs.PUSH_TARGET, "http://r/m", False),
    (image_refs.BUILD_PREFIX, "docker://localhost:5000/modak", True), (image_refs.BUILD_PREFIX, "/srv/images", True),
    (image_refs.BUILD_PREFIX, "http://evil/$(id)", False),
])
def test_the_name_patterns(pattern, text, ok):
    assert bool(pattern.match(text)) is ok


def test_a_tagged_reference_splits_into_host_repository_and_tag():
    parts = image_refs.TAGGED.match("docker://localhost:5000/modak/x:abc").groups()
    assert parts == ("localhost:5000", "modak/x", "abc")
    assert image_refs.TAGGED.match("docker://localhost:5000/modak/x") is None


def test_every_reader_uses_the_one_module():
    assert blocks.IMAGE is image_refs.NAME and recipe_images.PREFIX is image_refs.BUILD_PREFIX
    assert build_commands._IMAGE is image_refs.BUILD_TARGET and build_commands._DEST is image_refs.PUSH_TARGET
    copies = []
    for folder, _dirs, names in os.walk(os.path.join(ROOT, "plugins")):
        for name in names:
            if name.endswith(".py") and name != "image_refs.py":
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    if re.search(r"A-Za-z0-9\]\[A-Za-z0-9\._/:@", handle.read()):
                        copies.append(name)
    assert copies == []
