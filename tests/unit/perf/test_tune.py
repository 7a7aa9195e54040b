"""Autotuning a DSL's application: command lines, records, the runner, and optimise's hint when records are missing."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import ai_doc, with_

from perf_records import hardware, measured_in, records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.perf import search, store, tune

TUNING = {"threads": [1, 2], "batch_size": [64, 128], "precision": ["fp32", "bf16"]}

# a real program that follows the argument convention: it reports what it received
ECHO = ("import json, os, sys; a = sys.argv[1:]; "
        "print('starting'); "
        "print(json.dumps({'timing': {'per_sample_s': 0.001 * int(os.environ['OMP_NUM_THREADS'])}, "
        "'argv': a, 'load': {'other_busy_cores': 0.25}}))")


def autotuning_doc(tuning=None):
    doc = with_(ai_doc("pytorch"), "job.optimisation.tuning", tuning or TUNING)
    return with_(doc, "job.optimisation.enable_autotuning", True)


def test_argv_is_program_then_extra_then_knobs():
    config = store.normalise_config({"threads": 2, "batch_size": 128, "precision": "bf16", "compile": True})
    argv = tune.application_argv(["python3", "train.py", "--steps", "20"], config, ["batch_size", "precision"],
                                 interpreter="/venv/bin/python", extra_args=["--steps", "2"])
    assert argv == ["/venv/bin/python", "train.py", "--steps", "20", "--steps", "2",
                    "--batch-size", "128", "--precision", "bf16"]
    assert tune.application_argv(["./train"], config, ["compile"], interpreter="/venv/bin/python") == \
        ["./train", "--compile"]
    with pytest.raises(tune.TuneError):
        tune.application_argv([], config, ["compile"])


def test_record_is_the_last_json_line_with_a_time():
    out = "\n".join(["log line", json.dumps({"timing": {"per_sample_s": 0.5}, "n": 1}),
                     json.dumps({"timing": {"per_sample_s": 0.25}, "n": 2}), json.dumps({"other": 1}), "{broken"])
    assert tune.parse_record(out)["n"] == 2
    assert tune.parse_record("no record\n" + json.dumps({"timing": {"per_sample_s": 0}})) is None


def test_run_application_passes_threads_and_knobs(tmp_path):
    config = store.normalise_config({"threads": 2, "batch_size": 128})
    argv = tune.application_argv([sys.executable, "-c", ECHO], config, ["threads", "batch_size"])
    host = {"model": "cpu", "arch": "x86_64", "cores": 2, "flags": [], "foreign_load": 0.7}
    record = tune.run_application(argv, config, cwd=str(tmp_path), timeout=60, hardware=host)
    assert record["argv"] == ["--batch-size", "128"]
    assert record["timing"]["per_sample_s"] == pytest.approx(0.002)
    assert record["config"] == config and record["phase"] == "autotune"
    assert store.hardware_class(record["hardware"]) == store.hardware_class(host)
    assert "foreign_load" not in record["hardware"]


def test_run_application_reports_a_failing_or_silent_program(tmp_path):
    config = store.normalise_config({"threads": 1})
    with pytest.raises(tune.TuneError, match="exited with 3"):
        tune.run_application([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"], config,
                             cwd=str(tmp_path), timeout=60)
    with pytest.raises(tune.TuneError, match="printed no JSON record"):
        tune.run_application([sys.executable, "-c", "print('hello')"], config, cwd=str(tmp_path), timeout=60)


def test_space_is_capped_at_the_usable_cores():
    request = dsl.parse(autotuning_doc({"threads": [1, 2, 4]}))
    found, base = tune.candidates_for(request, {"cores": 2, "usable_cores": 2})
    assert sorted(c["threads"] for c in found) == [1, 2] and base["threads"] == 2


def test_optimise_explains_how_to_produce_missing_records(catalog, hardware):
    result = pipeline.optimise(autotuning_doc(), catalog, [], dict(hardware, foreign_load=0.0))
    advice = result.extra["prediction"]
    assert advice["source"] == "rules"
    hints = [w for w in result.warnings if "playbooks/autotune.yml" in w]
    assert len(hints) == 1 and "enable_autotuning" in hints[0] and "no benchmark records" in hints[0]
    assert any("playbooks/autotune.yml" in line for line in result.explanation)


def test_optimise_uses_records_when_present(catalog, records, hardware):
    doc = with_(autotuning_doc(), "job.application.executable", "python3 benchmarks/workload/mnist_cnn.py")
    result = pipeline.optimise(doc, catalog, measured_in(records, doc, catalog), dict(hardware, foreign_load=0.0))
    assert result.extra["prediction"]["source"] == "model"
    assert not [w for w in result.warnings if "autotune" in w]


def test_no_hint_without_enable_autotuning(catalog, hardware):
    doc = with_(ai_doc("pytorch"), "job.optimisation.tuning", TUNING)
    result = pipeline.optimise(doc, catalog, [], dict(hardware, foreign_load=0.0))
    assert not [w for w in result.warnings if "autotune" in w]
    assert search.advise(dsl.parse(doc), None, [], dict(hardware, foreign_load=0.0))["source"] == "rules"
