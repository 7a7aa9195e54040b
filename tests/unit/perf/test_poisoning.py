"""Results-store poisoning: bad records are refused on the way in and skipped on the way out; the model is kept
per application as well as per hardware class."""

from __future__ import annotations

import copy
import json
import os
import sqlite3

import pytest

from helpers import ai_doc, with_

from perf_records import hardware, measured_in, records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.perf import search, store

MNIST = "python3 benchmarks/workload/mnist_cnn.py"
TUNING = {"threads": [1, 2], "batch_size": [64, 128], "precision": ["fp32", "bf16"]}
POISON = [("load", "other_busy_cores", float("inf")), ("load", "other_busy_cores", float("nan")),
          ("load", "other_busy_cores", -3), ("timing", "per_sample_s", float("inf")),
          ("timing", "per_sample_s", -1.0), ("timing", "per_sample_s", "fast"), ("config", "threads", 10 ** 9),
          ("config", "batch_size", 1.5), ("load", None, "busy")]


def poisoned(record, section, key, value):
    bad = copy.deepcopy(record)
    if key is None:
        bad[section] = value
    else:
        bad[section][key] = value
    return bad


def request_doc(executable=MNIST):
    return with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", TUNING), "job.application.executable",
                 executable)


def stored_as_before(path, rows):
    """A store holding rows as an unchecked writer left them (1e999 is read back as inf)."""
    store.append(path, [])
    conn = sqlite3.connect(path)
    conn.execute(store._DDL)
    conn.executemany("INSERT INTO runs (workload, hw_class, config_key, inserted_at, record) "
                     "VALUES ('w', 'c', 'k', 0, ?)", [(json.dumps(r),) for r in rows])
    conn.commit()
    conn.close()


@pytest.mark.parametrize("section,key,value", POISON, ids=[repr(p) for p in POISON])
def test_a_poisoned_record_is_refused_on_the_way_in(tmp_path, records, section, key, value):
    path = str(tmp_path / "results.sqlite")
    store.append(path, records[:3])
    with open(path, "rb") as handle:
        before = handle.read()
    with pytest.raises(store.StoreError, match="refusing"):
        store.append(path, [records[3], poisoned(records[4], section, key, value)])
    assert len(store.load(path)) == 3
    with open(path, "rb") as handle:
        assert handle.read() == before


@pytest.mark.parametrize("section,key,value", POISON[:5], ids=[repr(p) for p in POISON[:5]])
def test_a_poisoned_record_already_stored_is_skipped_and_said(tmp_path, catalog, records, hardware,
                                                              section, key, value):
    path = str(tmp_path / "results.sqlite")
    records = measured_in(records, request_doc(), catalog)
    stored_as_before(path, list(records) + [poisoned(records[0], section, key, value)])
    result = pipeline.optimise(request_doc(), catalog, store.load(path), dict(hardware, foreign_load=0.0))
    advice = result.extra["prediction"]
    assert advice["source"] == "model" and advice["records"] == len(records), advice
    assert any("skipped 1 invalid record" in w for w in result.warnings), result.warnings


def test_1e999_in_a_results_file_does_not_break_optimise(tmp_path, catalog, records, hardware):
    path = tmp_path / "results.jsonl"
    records = measured_in(records, request_doc(), catalog)
    lines = [json.dumps(r) for r in records]
    lines.append(json.dumps(records[0]).replace('"other_busy_cores": ', '"other_busy_cores": 1e999, "x": '))
    path.write_text("\n".join(lines) + "\n")
    result = pipeline.optimise(request_doc(), catalog, store.load(str(path)), dict(hardware, foreign_load=0.0))
    assert result.extra["prediction"]["source"] == "model"


def test_records_of_another_application_do_not_steer_the_model(records, hardware):
    host = dict(hardware, foreign_load=0.0)
    own = search.advise(dsl.parse(request_doc()), None, records, host)
    # another program measured on the same machine, with the opposite ranking of configurations
    others = []
    for record in records:
        other = copy.deepcopy(record)
        other["workload"] = "other_app"
        other["timing"]["per_sample_s"] = 1.0 / record["timing"]["per_sample_s"]
        others.append(other)
    mixed = search.advise(dsl.parse(request_doc()), None, records + others, host)
    assert mixed["config"] == own["config"] and mixed["records"] == own["records"] == len(records)
    alone = search.advise(dsl.parse(request_doc("python3 train.py")), None, records, host)
    assert alone["source"] == "rules" and alone["records"] == 0, alone


@pytest.mark.parametrize("argv,key", [
    (["python3", "benchmarks/workload/mnist_cnn.py", "--steps", "2"], "mnist_cnn"),
    (["python3", "-u", "mnist_cnn.py"], "mnist_cnn"),
    (["/opt/app/bin/solver", "-n", "4"], "solver"),
    (["bash", "run.sh"], "run"),
    ([], ""),
])
def test_application_key(argv, key):
    assert store.application_key(argv) == key


def test_the_benchmark_workload_names_the_same_application_as_its_dsl():
    assert store.record_application({"workload": "mnist_cnn"}) == store.application_key(MNIST.split())
    assert os.path.exists(os.path.join(os.path.dirname(__file__), "..", "..", "..", MNIST.split()[1]))
