"""The scheduler registry is the one list of schedulers: everything that names them is generated from it."""

from __future__ import annotations

import importlib.util
import os

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, schema
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry, table
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import Submitter
from ansible_collections.sodalite.modak.plugins.modules import batch_job


def _sync():
    spec = importlib.util.spec_from_file_location("sync_scheduler_names",
                                                  os.path.join(ROOT, "scripts", "sync_scheduler_names.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SYNC = _sync()


@pytest.mark.parametrize("name", SYNC.FILES)
def test_generated_name_lists_are_current(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        text = handle.read()
    assert SYNC.sync(text) == text, "run scripts/sync_scheduler_names.py (make schema) after changing the registry"


def test_batch_job_choices_are_the_registry_names():
    doc = yaml.safe_load(batch_job.DOCUMENTATION)
    assert "sodalite.modak.schedulers" in doc["extends_documentation_fragment"]   # its choices: the registry's
    assert batch_job.ARGUMENT_SPEC["scheduler"]["choices"] == list(registry.NAMES)


def test_schema_enum_and_dsl_aliases_come_from_the_registry():
    assert schema.TARGET["properties"]["job_scheduler_type"]["enum"] == list(registry.ALL_NAMES)
    assert dsl.SCHEDULER_ALIASES == registry.ALIASES == table.ALIASES


def test_tosca_dsl_type_takes_every_dsl_word():
    with open(os.path.join(ROOT, "tosca", "library", "modak", "types.yaml"), encoding="utf-8") as handle:
        types = yaml.safe_load(handle)
    found = [c["valid_values"] for dtype in types["data_types"].values()
             for prop in (dtype.get("properties") or {}).values() if isinstance(prop, dict)
             for c in prop.get("constraints", []) if "slurm" in c.get("valid_values", [])]
    assert list(registry.ALL_NAMES) in found


def test_every_backend_offers_the_interface():
    seen = set()
    for backend in registry.backends():
        assert issubclass(backend, Submitter) and issubclass(backend.writer, Scheduler)
        assert backend.writer.name == backend.name
        for method in ("submit", "status", "cancel", "find_active", "claims", "name_of"):
            assert callable(getattr(backend, method))
        words = {backend.name} | set(backend.aliases)
        assert not words & seen, words
        seen |= words
    assert [b.name for b in registry.backends() if b.fallback] == [registry.FALLBACK]


@pytest.mark.parametrize("word", registry.ALL_NAMES)
def test_every_dsl_word_finds_its_backends(word):
    assert registry.get(word).name == registry.submitter(word).name == registry.canonical(word)


def test_an_unknown_name_says_which_are_known():
    with pytest.raises(KeyError, match=r"unknown scheduler 'lsf' \(known: ") as info:
        registry.get("lsf")
    assert all(name in str(info.value) for name in registry.NAMES)


def test_container_engines_come_from_the_runtime_registry():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtimes
    assert schema.TARGET["properties"]["container_engine"]["enum"] == list(runtimes.RUNTIMES)


def test_launchers_come_from_the_launcher_registry():
    from ansible_collections.sodalite.modak.plugins.module_utils import launchers
    assert schema.APPLICATION["properties"]["launcher"]["enum"] == list(launchers.NAMES)
    assert set(launchers.LAUNCHERS) | {"auto", "none"} == set(launchers.NAMES)
    assert all(registry.get(name).default_launcher in launchers.LAUNCHERS for name in registry.NAMES)
