"""Step one parses a document once: the original's forms are read first (compat.normalise, on any document),
the canonical document is validated once, and the request is built from it."""

from __future__ import annotations

import io
import json

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import cli, compat, dsl, dsl_check, schema


@pytest.fixture
def validations(monkeypatch):
    calls = []
    real = dsl_check.problems

    def counted(doc):
        calls.append(doc)
        return real(doc)
    monkeypatch.setattr(dsl_check, "problems", counted)
    return calls


@pytest.mark.parametrize("command", ["optimise", "recipe"])
def test_the_cli_validates_each_document_once(tmp_path, validations, command):
    """Before, `modak optimise` and `modak recipe` validated a file, then parsed it again to optimise it."""
    status = cli.main([command, "%s/examples/pytorch-cpu-slurm.yaml" % ROOT, "-o", str(tmp_path / "out")],
                      stdout=io.StringIO(), stderr=io.StringIO())
    assert status == 0 and len(validations) == 1


def test_the_rules_see_the_canonical_document(validations):
    doc = {"job": {"application": {"executable": "a.out", "container_runtime": "pytorch/pytorch:2.5.1"},
                   "job_options": {"combine_stdout_stderr": "False", "standard_error_file": "err"},
                   "target": {"queue_type": "slurm"}}}
    request = dsl.parse(doc)
    [seen] = validations
    assert seen["job"]["job_options"]["combine_stdout_stderr"] is False
    assert seen["job"]["target"] == {"job_scheduler_type": "slurm"}
    assert seen["job"]["application"]["container_runtime"] == "docker://pytorch/pytorch:2.5.1"
    assert request.target.scheduler == "slurm" and request.options.stderr == "err"
    assert doc["job"]["target"] == {"queue_type": "slurm"}          # the caller's document is not changed


@pytest.mark.parametrize("value", ["maybe", "yes", "TRUE "])
def test_only_the_originals_boolean_words_are_read_as_booleans(value):
    """normalise now runs before validation: any other text stays for the schema to name (it became False)."""
    doc = {"job": {"application": {"executable": "a.out"}, "optimisation": {"enable_opt_build": value}}}
    assert compat.normalise(doc, schema.SCHEMA).doc["job"]["optimisation"]["enable_opt_build"] == value
    with pytest.raises(dsl.DslInvalid) as caught:
        dsl.parse(doc)
    assert "job.optimisation.enable_opt_build" in [p.path for p in caught.value.problems]


def test_a_renamed_key_is_named_as_written():
    doc = {"job": {"application": {"executable": "a.out"}, "target": {"queue_type": "slurmm"}}}
    with pytest.raises(dsl.DslInvalid) as caught:
        dsl.parse(doc)
    assert [(p.path, p.value) for p in caught.value.problems] == [("job.target.queue_type", "slurmm")]


def test_a_runtime_that_is_no_reference_is_left_as_written():
    doc = {"job": {"application": {"executable": "a.out", "container_runtime": "my image"}}}
    with pytest.raises(dsl.DslInvalid) as caught:
        dsl.parse(doc)
    assert [p.value for p in caught.value.problems] == ["my image"]


ODD = [None, [], "job", {"job": []}, {"job": {"optimisation": {"autotuning": "x", "enable_autotuning": 1}}},
       {"job": {"target": ["queue_type"], "application": "x"}}]


@pytest.mark.parametrize("doc", ODD)
def test_normalise_takes_any_document(doc):
    canonical = compat.normalise(doc, schema.SCHEMA)
    assert json.dumps(canonical.doc) == json.dumps(doc)
