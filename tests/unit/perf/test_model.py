"""Fit and predict on recorded runs; LOCO; the linear baseline."""

from __future__ import annotations

import math

import pytest

from perf_records import hardware, records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, store


def test_fit_predicts_recorded_runs(records):
    fitted = predictor.fit(records)
    errors = []
    for r in records:
        predicted = fitted.predict(r["config"], store.foreign_load(r))[0]
        errors.append(abs(math.log(predicted / r["timing"]["per_sample_s"])))
    assert sorted(errors)[len(errors) // 2] < math.log(1.5)
    assert fitted.n_records == len(records)


def test_interval_brackets_the_prediction(records):
    fitted = predictor.fit(records)
    value, low, high = fitted.interval(records[0]["config"])
    assert low < value < high


def test_uncertainty_grows_away_from_the_data(records):
    fitted = predictor.fit(records)
    measured = records[0]["config"]
    far = dict(measured, batch_size=4096, threads=64)
    assert fitted.predict(far, epistemic=True)[1] > fitted.predict(measured, epistemic=True)[1]


def test_foreign_load_slows_a_two_thread_team_more(records):
    fitted = predictor.fit(records)
    one, two = dict(records[0]["config"], threads=1), dict(records[0]["config"], threads=2)
    slow_two = fitted.predict(two, 1.0)[0] / fitted.predict(two, 0.0)[0]
    slow_one = fitted.predict(one, 1.0)[0] / fitted.predict(one, 0.0)[0]
    assert slow_two > slow_one


def test_loco_reports_every_configuration(records):
    result = predictor.loco(records)
    keys = set(store.config_key(r["config"]) for r in records)
    assert set(result["errors"]) == keys
    assert result["median"] == sorted(result["errors"].values())[len(keys) // 2] or len(keys) % 2 == 0
    assert all(v >= 0 for v in result["errors"].values())


def test_linear_baseline_fits_and_predicts(records):
    fitted = predictor.fit(records, "linear")
    assert fitted.predict(records[0]["config"])[0] > 0
    assert predictor.loco(records, "linear")["median"] is not None


def test_fit_needs_records():
    with pytest.raises(ValueError):
        predictor.fit([])


def test_oversubscription_counts_threads_without_a_free_core():
    assert predictor.oversubscription(1, 2, 0.0) == 0.0
    assert predictor.oversubscription(2, 2, 0.0) == 0.0
    assert predictor.oversubscription(2, 2, 1.0) == pytest.approx(1.0)
    assert predictor.oversubscription(1, 2, 1.5) == pytest.approx(0.5)
    assert predictor.oversubscription(4, 2, 0.0) == pytest.approx(2.0)


def test_threads_should_match_free_cores(records):
    """Quiet: the second thread helps; one core taken by others: the second thread hurts."""
    fitted = predictor.fit(records)
    assert fitted.cores == records[0]["hardware"]["cores"]
    one, two = dict(records[0]["config"], threads=1), dict(records[0]["config"], threads=2)
    assert fitted.predict(two, 0.0)[0] < fitted.predict(one, 0.0)[0]
    assert fitted.predict(two, 1.2)[0] > fitted.predict(one, 1.2)[0]


def test_loglinear_beats_the_linear_baseline_out_of_sample(records):
    assert predictor.loco(records)["median"] < predictor.loco(records, "linear")["median"]
