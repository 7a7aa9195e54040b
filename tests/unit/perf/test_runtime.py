"""The run-time model of placement: a level per place, one node-scaling exponent fitted from the groups that ran at
several node counts, Student's t interval on log time; run records kept in the results store beside the benchmark
records and screened as they are."""

from __future__ import annotations

import math

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.perf import runtime, store


def runs(partition, *pairs):
    """Run records of 'spin' on ``partition`` from (nodes, seconds) pairs."""
    return [runtime.run_record("spin", seconds, nodes, partition) for nodes, seconds in pairs]


def test_the_node_scaling_term_is_fitted_and_shared_by_the_groups():
    # big halves its time with twice the nodes (within a few per cent); small ran on one node count only
    groups = {"big": runs("big", (1, 101.0), (2, 49.0), (4, 25.5), (1, 99.0), (2, 51.0), (4, 24.5)),
              "small": runs("small", (1, 30.0), (1, 31.0), (1, 29.0))}
    model = runtime.fit(groups)
    assert model.scaling_fitted and 2 ** model.slope == pytest.approx(0.5, abs=0.02)
    seconds, low, high = model.predict("big", 8)
    assert seconds == pytest.approx(12.5, rel=0.05) and low < seconds < high
    inside = model.predict("big", 2)
    assert inside[2] / inside[1] < high / low          # farther from the runs, a wider interval
    small = model.predict("small", 2)
    assert small[0] == pytest.approx(15.0, rel=0.05)    # the scaling of big, applied to small
    assert "node scaling: time x 0.50 per doubling" in runtime.describe(model, "small", 2, "on partition small")


def test_without_several_node_counts_nothing_is_extrapolated_in_silence():
    model = runtime.fit({"slow": runs("slow", (1, 24.0), (1, 26.0))})
    assert not model.scaling_fitted and model.predict("slow", 4)[0] == pytest.approx(math.sqrt(24 * 26))
    said = runtime.describe(model, "slow", 4, "on partition slow")
    assert said.startswith("2 recorded run(s) on partition slow on 1 node(s), no node scaling measured")


def test_one_run_gives_a_time_without_an_interval():
    model = runtime.fit({"once": runs("once", (1, 10.0))})
    assert model.predict("once", 1) == (pytest.approx(10.0), None, None)
    assert runtime.describe(model, "once", 1, "there").endswith("no interval (too few runs)")
    assert model.predict("elsewhere", 1) is None


def test_the_interval_covers_the_spread_of_the_runs():
    seconds = [20.0, 22.0, 25.0, 21.0, 23.0]
    model = runtime.fit({"p": runs("p", *[(1, s) for s in seconds])})
    _mean, low, high = model.predict("p", 1)
    assert low < min(seconds) and high > max(seconds)


def test_runs_are_grouped_by_partition_or_by_hardware_class_and_by_application():
    hardware = {"model": "CPU", "arch": "x86_64", "cores": 4}
    records = runs("a", (1, 5.0)) + [runtime.run_record("spin", 7.0, 1, "b", hardware),
                                     runtime.run_record("other", 9.0, 1, "a")]
    assert [r["job_run"]["elapsed_s"] for r in runtime.group_runs(records, "spin", "a")] == [5.0]
    assert [r["job_run"]["elapsed_s"] for r in runtime.group_runs(records, "spin", "a", "CPU|x86_64|4c|-")] == [7.0]


@pytest.mark.parametrize("run, said", [
    ({"elapsed_s": float("inf"), "nodes": 1}, "job_run.elapsed_s must be a finite number"),
    ({"elapsed_s": -1.0, "nodes": 1}, "job_run.elapsed_s must be a finite number"),
    ({"elapsed_s": 1.0, "nodes": 0}, "job_run.nodes must be an integer"),
    ({"elapsed_s": 1.0, "nodes": True}, "job_run.nodes must be an integer"),
    ({"elapsed_s": 1.0, "nodes": 1, "partition": ["x"]}, "job_run.partition must be a string"),
])
def test_a_poisoned_run_is_refused_on_the_way_in_and_skipped_on_the_way_out(tmp_path, run, said):
    record = {"application": "spin", "job_run": run}
    assert any(p.startswith(said) for p in store.problems(record))
    assert not runtime.is_run(record)
    with pytest.raises(store.StoreError):
        store.append(str(tmp_path / "runs.sqlite"), [record])


def test_a_run_that_is_no_object_is_not_a_record():
    record = {"application": "spin", "job_run": "fast"}
    assert store.problems(record) == ["config is not an object", "job_run is not an object"]
    assert store.append("/nonexistent/never-written.sqlite", [record]) == 0


def test_run_records_live_beside_the_benchmark_records_and_stay_out_of_their_model(tmp_path):
    path = str(tmp_path / "results.sqlite")
    benchmark = {"config": {"threads": 2}, "timing": {"per_sample_s": 0.001}, "hardware": {"model": "CPU"}}
    assert store.append(path, runs("slow", (1, 24.0), (2, 13.0)) + [benchmark]) == 3
    loaded = store.load(path)
    assert [runtime.is_run(r) for r in loaded] == [True, True, False]
    assert [store.valid(r) for r in loaded] == [False, False, True]
    assert runtime.group_runs(loaded, "spin", "slow") == loaded[:2]
