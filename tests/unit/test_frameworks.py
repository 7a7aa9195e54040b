"""A framework is one entry of the frameworks registry: the schema, the settings and the recipes read it."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import frameworks, schema
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks, spec


def test_the_schema_offers_exactly_the_registered_frameworks_and_their_options():
    assert tuple(schema.FRAMEWORKS) == frameworks.names()
    for name, fw in frameworks.FRAMEWORKS.items():
        options = set(schema.AI_FRAMEWORK[name]["properties"])
        assert options == {"version"} | set(fw.switches) | set(fw.choices)


@pytest.mark.parametrize("name", frameworks.names())
def test_recipes_read_pip_names_and_source_builds_from_the_registry(name):
    fw = frameworks.get(name)
    assert blocks.FrameworkPip.PACKAGES[name] == fw.pip
    assert (name in blocks.FrameworkSource.SOURCES) == (fw.source is not None)
    assert (name in spec.SOURCE_FRAMEWORKS) == (fw.source is not None)
    if fw.default_version:
        assert spec.DEFAULT_VERSIONS[name] == fw.default_version


def test_a_new_framework_is_one_entry(monkeypatch):
    entry = frameworks.Framework("paddle", pip="paddlepaddle", module="paddle", default_version="2.6.1",
                                 switches={"cinn": ("cinn", "Use the CINN compiler.")},
                                 env={"cinn": (("FLAGS_use_cinn", "1"),)})
    monkeypatch.setitem(frameworks.FRAMEWORKS, "paddle", entry)
    assert frameworks.pip_packages()["paddle"] == "paddlepaddle"
    assert frameworks.default_versions()["paddle"] == "2.6.1"
    assert frameworks.env_for("paddle", "cinn") == (("FLAGS_use_cinn", "1"),)
