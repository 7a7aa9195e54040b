"""The scheduler registry is the one list of schedulers: everything that names them is generated from it."""

from __future__ import annotations

import os
import re

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import dsl_request, schema
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler
from ansible_collections.sodalite.modak.plugins.modules import batch_job


def test_tosca_and_roles_list_no_scheduler_names_by_hand():
    """The registry is the one list: outside what make schema writes (the data types generated from the schema,
    the node types' marked constraint lines), no TOSCA file, role or playbook lists the schedulers."""
    listed = re.compile(r"\[[^\]\n]*\bslurm\b[^\]\n]*\bpbspro\b")
    for top in ("tosca", "roles", "playbooks"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".yml", ".yaml")):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    text = handle.read()
                if "# BEGIN data types generated" in text:
                    text = text[:text.index("# BEGIN data types")] + text[text.index("# END generated data types"):]
                written = "# the scheduler registry's names (scripts/export_tosca_types.py)"   # by make schema
                text = "\n".join(line for line in text.split("\n") if not line.endswith(written))
                assert not listed.search(text), os.path.join(folder, name)


def test_batch_job_choices_are_the_registry_names():
    doc = yaml.safe_load(batch_job.DOCUMENTATION)
    assert "sodalite.modak.schedulers" in doc["extends_documentation_fragment"]   # its choices: the registry's
    assert batch_job.ARGUMENT_SPEC["scheduler"]["choices"] == list(registry.NAMES)


def test_schema_enum_and_dsl_aliases_come_from_the_registry():
    assert schema.TARGET["properties"]["job_scheduler_type"]["enum"] == list(registry.ALL_NAMES)
    assert dsl_request.SCHEDULER_ALIASES == registry.ALIASES


def test_tosca_dsl_type_takes_every_dsl_word():
    with open(os.path.join(ROOT, "tosca", "library", "modak", "types.yaml"), encoding="utf-8") as handle:
        types = yaml.safe_load(handle)
    found = [c["valid_values"] for dtype in types["data_types"].values()
             for prop in (dtype.get("properties") or {}).values() if isinstance(prop, dict)
             for c in prop.get("constraints", []) if "slurm" in c.get("valid_values", [])]
    assert list(registry.ALL_NAMES) in found


def test_every_scheduler_is_one_class_with_the_whole_interface():
    seen = set()
    for backend in registry.backends():
        assert issubclass(backend, Scheduler) and backend.name in registry.NAMES
        for method in ("directives", "preamble", "submit", "status", "cancel", "find_active", "claims", "name_of"):
            assert callable(getattr(backend, method))
        words = {backend.name} | set(registry.descriptor(backend.name).aliases)
        assert not words & seen, words
        seen |= words
    assert registry.FALLBACK == "local" and not registry.scheduler_class("local").prefix   # it claims no script


def test_capabilities_are_the_descriptors():
    assert registry.capable("slurm", registry.SRUN_STEPS) and not registry.capable("sge", registry.SRUN_STEPS)
    assert registry.capable("pbs", registry.BATCH) and not registry.capable("bash", registry.BATCH)
    assert not registry.capable("lsf", registry.BATCH)


def test_no_code_outside_schedulers_compares_scheduler_names():
    """Capabilities instead: a comparison with a scheduler's name (or an alias) anywhere in plugins/ but
    schedulers/ would be a second place that knows what one scheduler does."""
    words = "|".join(re.escape(w) for w in registry.ALL_NAMES if w != "none")   # 'none' is also a launcher
    compares = re.compile(r"""(==|!=|\bin)\s*[(\[]?\s*["'](%s)["']|["'](%s)["']\s*(==|!=)""" % (words, words))
    found = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "plugins")):
        if os.path.basename(folder) == "schedulers":
            continue
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    found.extend("%s: %s" % (name, line.strip()) for line in handle if compares.search(line))
    assert not found


@pytest.mark.parametrize("word", registry.ALL_NAMES)
def test_every_dsl_word_finds_its_backends(word):
    assert registry.get(word).name == registry.scheduler_class(word).name == registry.canonical(word)


def test_an_unknown_name_says_which_are_known():
    with pytest.raises(KeyError, match=r"unknown scheduler 'lsf' \(known: ") as info:
        registry.get("lsf")
    assert all(name in str(info.value) for name in registry.NAMES)


def test_container_engines_come_from_the_runtime_registry():
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtimes
    assert schema.TARGET["properties"]["container_engine"]["enum"] == list(runtimes.RUNTIMES)


def test_launchers_come_from_the_launcher_registry():
    from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry as launchers
    assert schema.APPLICATION["properties"]["launcher"]["enum"] == list(launchers.NAMES)
    assert set(launchers.BY_NAME) | {"auto", "none"} == set(launchers.NAMES)
    assert all(launchers.starts(registry.get(name).default_launcher, launchers.MPI) for name in registry.NAMES)
