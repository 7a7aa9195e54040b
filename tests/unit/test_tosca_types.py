"""The TOSCA data types are generated from the DSL schema: the committed copy may not drift."""

from __future__ import annotations

import importlib.util
import os

import yaml

from helpers import ROOT


def _exporter():
    spec = importlib.util.spec_from_file_location("export_tosca_types",
                                                  os.path.join(ROOT, "scripts", "export_tosca_types.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_data_types_are_what_the_schema_gives():
    exporter = _exporter()
    text, start, end = exporter.committed_block()
    assert text[start:end] == exporter.block(), "run: .venv/bin/python scripts/export_tosca_types.py --write"
    assert text == exporter.render(text), "run: .venv/bin/python scripts/export_tosca_types.py --write"


def test_the_node_types_take_the_scheduler_registrys_names():
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry
    exporter = _exporter()
    text, _start, _end = exporter.committed_block()
    types = yaml.safe_load(text)
    scheduler = types["capability_types"]["sodalite.modak.capabilities.Scheduler"]["properties"]["scheduler"]
    target = types["node_types"]["sodalite.modak.nodes.HpcTarget"]["properties"]["scheduler"]
    assert scheduler["constraints"] == target["constraints"] == [{"valid_values": list(registry.NAMES)}]
    assert text.count(exporter.SCHEDULER_MARK) == 4


def test_every_dsl_section_has_its_data_type_with_every_field():
    exporter = _exporter()
    types = yaml.safe_load(open(exporter.TYPES_FILE, encoding="utf-8"))["data_types"]
    schema = exporter.SCHEMA["properties"]["job"]["properties"]
    for section, name in (("job_options", "JobOptions"), ("application", "Application"), ("target", "Target"),
                          ("optimisation", "Optimisation")):
        fields = set(types["sodalite.modak.datatypes." + name]["properties"])
        assert fields == set(schema[section]["properties"]), section
    assert "tuning" in types["sodalite.modak.datatypes.Optimisation"]["properties"]


def test_data_types_keep_the_tosca_rules():
    types = yaml.safe_load(open(_exporter().TYPES_FILE, encoding="utf-8"))["data_types"]
    for name, body in types.items():
        assert "type" not in body["properties"], name
        for key, prop in body["properties"].items():
            assert "default" not in prop, (name, key)
