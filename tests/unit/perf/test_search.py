"""Search space, rules, selection, the stopping rule, autotuning on replayed runs, and the pipeline wiring."""

from __future__ import annotations

import math

from helpers import ai_doc, with_

from perf_records import hardware, records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, search, store

# the application the recorded runs measured (records are kept per application)
MNIST = "python3 benchmarks/workload/mnist_cnn.py"
SPACE = {"threads": [1, 2], "batch_size": [64, 128], "precision": ["fp32", "bf16"], "compile": [False, True]}


def test_space_is_the_product_with_defaults():
    configs = search.space(SPACE, {"threads": 2})
    assert len(configs) == 16
    assert all(c["onednn"] and not c["channels_last"] for c in configs)


def test_rules_threads_free_cores_bf16_only_with_amx_compiler_off():
    configs = search.space(SPACE, {"threads": 2})
    busy = {"cores": 2, "flags": ["avx512_bf16"], "foreign_load": 1.1}
    chosen, _why = search.rules(configs, {"threads": 2}, busy)
    assert chosen["threads"] == 1 and chosen["precision"] == "fp32" and not chosen["compile"]
    quiet_amx = {"cores": 2, "flags": ["amx_bf16", "avx512_bf16"], "foreign_load": 0.0}
    chosen, _why = search.rules(configs, {"threads": 2}, quiet_amx)
    assert chosen["threads"] == 2 and chosen["precision"] == "bf16"


def test_should_stop():
    assert search.should_stop(0.5, 3, 10, 0.02, 5)[0] is False
    assert search.should_stop(0.01, 3, 10, 0.02, 5)[0] is True
    assert search.should_stop(0.5, 10, 10, 0.02, 5)[0] is True
    assert search.should_stop(0.5, 3, 10, 0.02, 0)[0] is True


def _replay(records):
    """measure() that returns the next recorded run of a configuration (real measurements, replayed)."""
    queues = predictor.by_config(records)
    used = {}

    def measure(config):
        key = store.config_key(config)
        rows = queues[key]
        used[key] = used.get(key, 0) + 1
        return rows[(used[key] - 1) % len(rows)]
    return measure, used


def test_autotune_stops_before_the_whole_space(records):
    measured = predictor.by_config(records)
    tuning = {"threads": sorted(set(r["config"]["threads"] for r in records)),
              "precision": sorted(set(r["config"]["precision"] for r in records))}
    base = {"threads": max(tuning["threads"]), "batch_size": 64}
    candidates = [c for c in search.space(tuning, base) if store.config_key(c) in measured]
    measure, used = _replay(records)
    result = search.autotune(candidates, measure, base, max_runs=len(candidates) - 1,
                             hw_class=store.hardware_class(records[0]["hardware"]))
    assert result["runs"] <= len(candidates) - 1
    assert result["stop_reason"]
    assert store.config_key(result["choice"]) in used


def test_advise_uses_the_model_for_a_known_class(records, hardware):
    tuning = {"threads": [1, 2], "precision": ["fp32", "bf16"]}
    doc = with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", tuning), "job.application.executable", MNIST)
    request = dsl.parse(doc)
    host = dict(hardware, foreign_load=0.0)
    advice = search.advise(request, None, records, host)
    assert advice["source"] == "model"
    allowed = set(store.config_key(c) for c in search.space(tuning, advice["default"]))
    assert store.config_key(advice["config"]) in allowed
    assert advice["speedup_vs_default"] == advice["default_predicted_s_per_sample"] / advice["predicted_s_per_sample"]
    ranked = advice["ranking"]
    assert ranked[0]["predicted_s"] == min(r["predicted_s"] for r in ranked)


def test_advise_falls_back_to_rules_for_an_unknown_class(records):
    doc = with_(ai_doc("pytorch"), "job.optimisation.tuning", {"threads": [1, 2], "compile": [True, False]})
    host = {"model": "Some other CPU", "arch": "x86_64", "cores": 2, "flags": [], "foreign_load": 0.0}
    advice = search.advise(dsl.parse(doc), None, records, host)
    assert advice["source"] == "rules" and advice["config"]["compile"] is False and advice["config"]["threads"] == 2


def test_no_tuning_no_advice(records):
    assert search.advise(dsl.parse(ai_doc("pytorch")), None, records, None) is None


def test_choice_reaches_the_job_script(catalog, records, hardware):
    doc = with_(ai_doc("pytorch", scheduler="slurm"), "job.optimisation.tuning",
                {"threads": [1, 2], "batch_size": [64, 128], "precision": ["fp32", "bf16"]})
    result = pipeline.optimise(doc, catalog, records, dict(hardware, foreign_load=0.0))
    advice = result.extra["prediction"]
    text = result.script.text
    assert "export OMP_NUM_THREADS=%d" % advice["config"]["threads"] in text
    assert "--batch-size %d --precision %s" % (advice["config"]["batch_size"], advice["config"]["precision"]) in text
    assert result.settings.threads == advice["config"]["threads"]


def test_tuning_values_are_validated():
    bad = with_(ai_doc("pytorch"), "job.optimisation.tuning", {"precision": ["fp8"]})
    assert dsl.problems(bad)
    bad = with_(ai_doc("pytorch"), "job.optimisation.tuning", {"threads": ["2; rm -rf /"]})
    assert dsl.problems(bad)


def test_epoch_time_follows_per_sample_time(records, hardware):
    doc = with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", {"threads": [1, 2]}),
                "job.application.executable", MNIST)
    advice = search.advise(dsl.parse(doc), None, records, dict(hardware, foreign_load=0.0))
    assert math.isclose(advice["predicted_epoch_s"], advice["predicted_s_per_sample"] * 60000)
