"""The modules' scheduler choices come from a doc fragment generated from the scheduler registry, and no
module's prose names some schedulers but not all."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.doc_fragments import schedulers as fragment
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules")) if name.endswith(".py"))


def _export():
    spec = importlib.util.spec_from_file_location("export_doc_fragments",
                                                  os.path.join(ROOT, "scripts", "export_doc_fragments.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXPORT = _export()


def _docs(name):
    """The module's DOCUMENTATION and RETURN as data."""
    spec = importlib.util.spec_from_file_location("doc_" + name, os.path.join(ROOT, "plugins", "modules", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return yaml.safe_load(module.DOCUMENTATION), yaml.safe_load(module.RETURN or "{}") or {}


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def test_the_fragment_is_current():
    with open(os.path.join(ROOT, "plugins", "doc_fragments", "schedulers.py"), encoding="utf-8") as handle:
        assert handle.read() == EXPORT.fragment_text(), "run scripts/export_doc_fragments.py --write (make schema)"


def test_the_fragment_gives_batch_job_the_registry_names():
    doc, _returned = _docs("batch_job")
    assert "sodalite.modak.schedulers" in doc["extends_documentation_fragment"]
    assert "choices" not in doc["options"]["scheduler"]          # the fragment adds them
    assert yaml.safe_load(fragment.ModuleDocFragment.DOCUMENTATION)["options"]["scheduler"]["choices"] == \
        list(registry.NAMES)


def test_every_registered_scheduler_has_a_title():
    assert [name for name, _title in EXPORT.titles()] == list(registry.NAMES)


@pytest.mark.parametrize("name", MODULES)
def test_prose_that_lists_schedulers_lists_them_all(name):
    titles = [title for _name, title in EXPORT.titles() if _name != registry.FALLBACK]
    words = list(registry.NAMES)
    for text in _strings(_docs(name)):
        text = re.sub(r"\s+", " ", text)
        said = [t for t in titles if t in text]
        assert len(said) < 3 or len(said) == len(titles), (name, text)
        named = [w for w in words if re.search(r"\b%s\b" % w, text)]
        assert len(named) < 3 or len(named) == len(words), (name, text)
