"""Catalog files are read with the DSL's strict loader and limits: no alias bombs, no key given twice, a size cap."""

from __future__ import annotations

import time

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import catalog, strict_load
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError

ENTRY = """images:
  - name: a
    uri: docker://example.org/a:1
    framework: pytorch
    version: "2.5.1"
    build: official
"""


def from_text(text, source):
    """The catalog of YAML or JSON ``text``, read as a catalog file is."""
    return catalog.ImageCatalog.from_data(catalog.data_of(text, source), source)


def _bomb(levels=9, width=9):
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        lines.append("l%d: &l%d [%s]" % (level, level, ", ".join(["*l%d" % (level - 1)] * width)))
    return "\n".join(lines) + "\nimages: *l%d\n" % (levels - 1)


def test_an_alias_bomb_is_refused_at_once():
    text = _bomb()
    assert len(text) < 600
    started = time.monotonic()
    with pytest.raises(CatalogError, match="alias"):
        from_text(text, "bomb.yaml")
    assert time.monotonic() - started < 1.0


def test_a_key_given_twice_is_refused_with_its_path():
    text = ENTRY.replace("    framework:", "    uri: docker://evil.example/a:1\n    framework:")
    with pytest.raises(CatalogError, match=r"images\[0\]\.uri.*more than once"):
        from_text(text, "twice.yaml")


def test_a_catalog_over_the_size_cap_is_refused_unread(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(str(path), "w") as handle:
        handle.write(ENTRY)
        handle.write("# %s\n" % ("x" * (strict_load.CATALOG.max_bytes + 10)))
    started = time.monotonic()
    with pytest.raises(CatalogError, match="larger than"):
        catalog.ImageCatalog.from_file(str(path))
    assert time.monotonic() - started < 1.0


def test_json_duplicates_are_refused_too():
    with pytest.raises(CatalogError, match="more than once"):
        from_text('{"images": [], "images": []}', "twice.json")


def test_a_plain_catalog_still_loads():
    assert len(from_text(ENTRY, "ok.yaml")) == 1
