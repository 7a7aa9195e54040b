"""Never slower than the default: a tuned choice is kept only when repeated runs where the job runs (same hardware
class, application and image) beat the framework defaults by more than the measured noise."""

from __future__ import annotations

import itertools
import math
import sys

import pytest
from helpers import ai_doc, with_

from ansible_collections.sodalite.modak.plugins.module_utils import dsl
from ansible_collections.sodalite.modak.plugins.module_utils.perf import search, store, tune

HOST = {"model": "Test CPU", "arch": "x86_64", "cores": 2, "usable_cores": 2, "flags": ["avx512f"],
        "foreign_load": 0.0}
TUNING = {"threads": [1, 2], "precision": ["fp32", "bf16"]}
IMAGE = "docker://localhost:5000/modak/modak-pytorch-2.13.0-cpu-x86-64-v2:f6956a6253ce"
DEFAULT = {"threads": 2, "precision": "fp32"}
BF16 = {"threads": 2, "precision": "bf16"}


def request():
    doc = with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", TUNING), "job.application.executable",
                "python3 mnist_cnn.py")
    return dsl.parse(doc)


def runs(config, times, image=IMAGE):
    """Records of ``config`` with these seconds per sample, measured in ``image``."""
    out = []
    for t in times:
        record = {"workload": "mnist_cnn", "config": store.normalise_config(config),
                  "hardware": {k: v for k, v in HOST.items() if k != "foreign_load"},
                  "timing": {"per_sample_s": t}, "load": {"other_busy_cores": 0.0}}
        if image:
            record["context"] = {"image": image}
        out.append(record)
    return out


def grid(bf16_times, default_times=(1.0e-3, 1.1e-3, 0.95e-3)):
    """The default and bf16 with the given times; the two 1-thread configurations clearly slower."""
    return (runs(DEFAULT, default_times) + runs(BF16, bf16_times)
            + runs({"threads": 1, "precision": "fp32"}, (1.6e-3, 1.7e-3))
            + runs({"threads": 1, "precision": "bf16"}, (1.5e-3, 1.55e-3)))


def test_a_choice_that_beats_the_default_beyond_the_noise_is_kept():
    advice = search.advise(request(), None, grid((0.6e-3, 0.62e-3, 0.58e-3)), HOST, context=IMAGE)
    assert advice["source"] == "model" and advice["kept"] is True
    assert advice["config"]["precision"] == "bf16"
    assert "--precision" in advice["args"] and "bf16" in advice["args"]


def test_a_gain_within_the_noise_keeps_the_defaults_and_says_why():
    advice = search.advise(request(), None, grid((0.96e-3, 0.99e-3, 1.0e-3)), HOST, context=IMAGE)
    assert advice["kept"] is False
    assert store.config_key(advice["config"]) == store.config_key(advice["default"])
    assert advice["args"] == ["--precision", "fp32"]
    assert any("kept the framework defaults" in n and "noise" in n for n in advice["notes"]), advice["notes"]


def test_a_choice_measured_once_keeps_the_defaults():
    """One short run said bf16 was fastest: not enough to change what the job runs."""
    advice = search.advise(request(), None, grid((0.5e-3,)), HOST, context=IMAGE)
    assert advice["kept"] is False and advice["config"]["precision"] == "fp32"
    assert "measured 1 time(s)" in advice["decision"]


def test_runs_outside_the_jobs_image_do_not_count():
    """Issue 22, found 1: autotuning outside the container chose a setting that was slower inside it."""
    outside = [dict(r, context=None) for r in grid((0.6e-3, 0.62e-3, 0.58e-3))]
    advice = search.advise(request(), None, outside, HOST, context=IMAGE)
    assert advice["source"] == "rules" and advice["records"] == 0 and advice["records_elsewhere"] == len(outside)
    assert store.config_key(advice["config"]) == store.config_key(advice["default"])
    assert any("measured elsewhere" in n for n in advice["notes"])
    elsewhere = search.advise(request(), None, grid((0.6e-3, 0.62e-3, 0.58e-3)), HOST, context="docker://other:1")
    assert elsewhere["records"] == 0


def test_without_records_the_defaults_run_and_the_rules_only_suggest():
    advice = search.advise(request(), None, [], dict(HOST, flags=["amx_bf16"]), context=IMAGE)
    assert advice["config"] == advice["default"] and advice["rules_suggestion"]["precision"] == "bf16"


def test_the_reported_interval_holds_the_measured_runs_of_the_choice():
    times = (0.6e-3, 0.75e-3, 0.58e-3)
    advice = search.advise(request(), None, grid(times), HOST, context=IMAGE)
    low, high = advice["interval_s_per_sample"]
    assert all(low <= t <= high for t in times)


def test_decide_needs_repeats_and_a_margin_over_the_noise():
    noisy = runs(DEFAULT, (1.0, 1.3, 0.8)) + runs(BF16, (0.8, 1.0, 0.7))
    keep, _why, numbers = search.decide(noisy, BF16, DEFAULT)
    assert keep is False and numbers["measured_speedup"] > 1.0
    quiet = runs(DEFAULT, (1.0, 1.01, 0.99)) + runs(BF16, (0.8, 0.81, 0.79))
    assert search.decide(quiet, BF16, DEFAULT)[0] is True
    assert search.decide(quiet, DEFAULT, DEFAULT)[0] is True


def test_autotune_repeats_every_configuration_it_measures():
    candidates = search.space(TUNING, store.normalise_config(DEFAULT))
    times = {store.config_key(c): 1e-3 * (1 + i) for i, c in enumerate(candidates)}
    counter = itertools.count()

    def measure(config):
        return [runs(config, [times[store.config_key(config)] * (1 + 0.01 * (next(counter) % 3))])[0]
                for _repeat in range(3)]
    result = search.autotune(candidates, measure, DEFAULT, max_runs=3,
                             hw_class=store.hardware_class(HOST))
    assert result["configs_run"] <= 3 and result["runs"] == 3 * result["configs_run"]
    per_config = {}
    for record in result["new_records"]:
        per_config[store.config_key(record["config"])] = per_config.get(store.config_key(record["config"]), 0) + 1
    assert set(per_config.values()) == {3}
    assert math.isfinite(result["predicted_s"])


# the runs autotuning made in modak's image on the AMD EPYC machine (benchmarks/results/containers-autotune.sqlite
# as committed in 459cbf7, the quiet run of issue 22): three of each configuration, one configuration after another
MEASURED_MS = {"t2-b64": (1.870, 1.506, 1.495), "t1-b64": (2.024, 2.067, 2.147), "t2-b128": (1.645, 1.217, 1.038),
               "t2-b64-bf16": (11.353, 12.421, 11.662), "t2-b64-compile": (1.989, 2.133, 2.158)}


def measured_runs():
    configs = {"t2-b64": {}, "t1-b64": {"threads": 1}, "t2-b128": {"batch_size": 128},
               "t2-b64-bf16": {"precision": "bf16"}, "t2-b64-compile": {"compile": True}}
    return [record for name, times in MEASURED_MS.items()
            for record in runs(dict(DEFAULT, **configs[name]), [1e-3 * t for t in times])]


def test_a_gain_one_configuration_spread_over_is_not_taken_for_sure():
    """Issue 22: the gate pooled the noise of all configurations (the steady bf16 and compile runs too) and kept
    batch 128 at a measured 1.27x; the containers benchmark then measured 1.08x, and modak's end-to-end lead over
    the official image shrank to the noise. Batch 128's own runs spread from 1.04 to 1.65 ms: its gain is not
    told from noise on three runs."""
    keep, why, numbers = search.decide(measured_runs(), dict(DEFAULT, batch_size=128), DEFAULT)
    assert keep is False, why
    assert numbers["measured_speedup"] == pytest.approx(1.265, abs=0.01)
    assert numbers["needed_speedup"] > 1.4 and numbers["interleaved"] is False


def confirm_runs(config, times):
    return [dict(r, phase=search.CONFIRM_PHASE) for r in runs(config, times)]


def test_interleaved_confirmation_runs_decide_when_there_are_enough():
    """Blocks measured one after another show bf16 1.3x faster (the machine slowed down between them); the rounds
    that alternate the two show no gain, and they decide."""
    blocks = runs(DEFAULT, (1.30, 1.31, 1.29)) + runs(BF16, (1.0, 1.01, 0.99))
    assert search.decide(blocks, BF16, DEFAULT)[0] is True
    alternated = confirm_runs(DEFAULT, (1.0, 1.02, 0.99, 1.01)) + confirm_runs(BF16, (1.0, 1.01, 1.0, 0.99))
    keep, why, numbers = search.decide(blocks + alternated, BF16, DEFAULT)
    assert keep is False and numbers["interleaved"] is True and numbers["choice_runs"] == 4
    assert "interleaved" in why
    # one confirmation round is not enough to decide on: all runs count then
    assert search.decide(blocks + alternated[:1] + alternated[4:5], BF16, DEFAULT)[2]["interleaved"] is False


SLOWER_DEFAULT = ("import json, sys; a = sys.argv[1:]; "
                  "print(json.dumps({'timing': {'per_sample_s': 0.001 if '128' in a else 0.002}, "
                  "'load': {'other_busy_cores': 0.0}, 'batch': a[a.index('--batch-size') + 1]}))")


def test_autotuning_confirms_a_choice_in_alternating_rounds(tmp_path):
    (tmp_path / "train.py").write_text(SLOWER_DEFAULT)
    doc = with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", {"batch_size": [64, 128]}),
                "job.application.executable", "python3 train.py")
    host = {k: v for k, v in HOST.items() if k != "foreign_load"}
    store_path = str(tmp_path / "runs.sqlite")
    result = tune.autotune_request(dsl.parse(doc), store_path, host, interpreter=sys.executable, cwd=str(tmp_path),
                                   repeats=2, confirm=3)
    confirmed = [r for r in store.load(store_path) if r.get("phase") == search.CONFIRM_PHASE]
    # the default first in even rounds, the choice first in odd ones
    assert [r["batch"] for r in confirmed] == ["64", "128", "128", "64", "64", "128"]
    assert result["confirm_runs"] == 6 and result["runs"] == 2 * 2 + 6
    assert result["kept"] is True and result["choice"]["batch_size"] == 128
    assert result["decision_numbers"]["interleaved"] is True
    # a later call without confirmation decides on all runs: the earlier call's rounds are not this call's
    again = tune.autotune_request(dsl.parse(doc), store_path, host, interpreter=sys.executable, cwd=str(tmp_path),
                                  repeats=2, confirm=0)
    assert again["confirm_runs"] == 0 and again["decision_numbers"]["interleaved"] is False


def test_no_confirmation_rounds_when_the_default_is_the_choice(tmp_path):
    (tmp_path / "train.py").write_text(SLOWER_DEFAULT.replace("0.001 if", "0.003 if"))
    doc = with_(with_(ai_doc("pytorch"), "job.optimisation.tuning", {"batch_size": [64, 128]}),
                "job.application.executable", "python3 train.py")
    host = {k: v for k, v in HOST.items() if k != "foreign_load"}
    result = tune.autotune_request(dsl.parse(doc), str(tmp_path / "runs.sqlite"), host, interpreter=sys.executable,
                                   cwd=str(tmp_path), repeats=2, confirm=3)
    assert result["confirm_runs"] == 0 and result["choice"]["batch_size"] == 64
