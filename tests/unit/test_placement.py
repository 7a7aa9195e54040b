"""job.placement: the partition where the job is predicted to finish first. sbatch --test-only's answer read back
(exact argv, the script on standard input), the choice from start estimates and run times, the explanation with the
runners-up, schedulers that cannot tell, and the refusals by path."""

from __future__ import annotations

import time

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, placement
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CommandTimeout, DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.perf import runtime
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry, slurm

ESTIMATE = ["env", "SLURM_TIME_FORMAT=standard", "sbatch", "--test-only"]
NOW = time.mktime((2026, 3, 4, 10, 0, 0, 0, 0, -1))     # local time, as sbatch writes it
REFUSED = "sbatch: error: Batch job submission failed: Requested node configuration is not available"


def answer(in_s, partition, now=NOW):
    """sbatch --test-only's words for a start ``in_s`` seconds after ``now``."""
    return (0, "", "sbatch: Job 7 to start at %s using 4 processors on nodes mn1 in partition %s"
            % (placement.at(now + in_s), partition))


class Runner(FakeRunner):
    """The fake runner, keeping what each command read on standard input."""

    def __init__(self, answers, **kwargs):
        super(Runner, self).__init__(answers, **kwargs)
        self.inputs = []

    def execute(self, argv, input_text=None):
        self.inputs.append(input_text)
        return super(Runner, self).execute(argv, input_text)


def spin(partitions=("fast", "slow"), scheduler="slurm", **options):
    """A job of 'bash spin.sh' on a whole node, placed among ``partitions`` (a name, or (name, hardware class))."""
    names = [{"name": p} if isinstance(p, str) else {"name": p[0], "hardware_class": p[1]} for p in partitions]
    return {"job": {"job_options": dict({"job_name": "spin", "node_exclusive": True, "wall_time_limit": "5:00"},
                                        **options),
                    "application": {"executable": "bash spin.sh", "container_runtime": ""},
                    "target": {"job_scheduler_type": scheduler},
                    "placement": {"partitions": names}}}


def runs(partition, *seconds, **kw):
    return [runtime.run_record("spin", s, kw.get("nodes", 1), partition, kw.get("hardware")) for s in seconds]


RECORDS = runs("fast", 9.5, 10.0, 10.5) + runs("slow", 24.0, 25.0, 26.0)


def script_for(partition):
    """A stand-in for the job script written for ``partition``."""
    return "#!/bin/bash\n#SBATCH --partition=%s\n" % partition


def place(doc, runner, records=RECORDS):
    request = dsl.parse(doc)
    clock = iter([NOW] + [NOW + 0.1 * i for i in range(1, 50)])
    return placement.choose(request, script_for, 1, records, runner, clock=lambda: next(clock))


def test_sbatch_test_only_reads_the_script_on_standard_input_and_says_the_start():
    runner = Runner([(ESTIMATE, answer(60, "fast"))])
    estimate = slurm.Slurm(runner).start_estimate("#!/bin/bash\n#SBATCH --partition=fast\ntrue\n")
    assert runner.history == [ESTIMATE] and runner.inputs == ["#!/bin/bash\n#SBATCH --partition=fast\ntrue\n"]
    assert estimate.fits and estimate.start == NOW + 60 and estimate.nodes == "mn1"
    assert "to start at 2026-03-04T10:01:00" in estimate.said


def test_the_start_is_read_among_other_lines_and_a_missing_one_is_none():
    text = ("sbatch: Job 12 to start at 2026-03-04T10:00:30 using 8 processors on nodes mn[1-2] in partition fast\n"
            "  Running jobs to be preempted: 9\n")
    assert slurm.parse_start_estimate(text) == (NOW + 30, "mn[1-2]")
    assert slurm.parse_start_estimate("sbatch: nothing to say") is None
    estimate = slurm.Slurm(Runner([(ESTIMATE, (0, "", "sbatch: nothing to say"))])).start_estimate("x")
    assert estimate.fits and estimate.start is None


def test_a_refusal_is_a_job_that_does_not_fit_with_the_schedulers_words():
    estimate = slurm.Slurm(Runner([(ESTIMATE, (1, "", REFUSED))])).start_estimate("x")
    assert not estimate.fits and estimate.said == REFUSED


def test_only_slurm_can_tell_when_a_job_would_start():
    assert [d.name for d in registry.SCHEDULERS if registry.START_ESTIMATE in d.capabilities] == ["slurm"]


def test_the_free_slow_partition_finishes_before_the_busy_fast_one():
    runner = Runner([(ESTIMATE, answer(60, "fast")), (ESTIMATE, answer(0, "slow"))])
    placed = place(spin(), runner)
    assert placed["partition"] == "slow"
    assert runner.inputs == ["#!/bin/bash\n#SBATCH --partition=fast\n", "#!/bin/bash\n#SBATCH --partition=slow\n"]
    fast, slow = placed["candidates"]
    assert fast["start_in_s"] == 60 and fast["run_s"] == pytest.approx(10.0, rel=0.01)
    assert fast["finish_in_s"] == pytest.approx(70.0, rel=0.01) and fast["start"] == "2026-03-04T10:01:00"
    assert slow["start_in_s"] == 0 and slow["finish_in_s"] == pytest.approx(25.0, rel=0.01)
    low, high = slow["run_interval_s"]
    assert low < 25 < high and slow["finish_interval_s"] == [low, high]
    chosen, runner_up = placed["notes"]
    assert chosen.startswith("placement: partition slow, by the earliest predicted finish; slow: finishes in 25 s")
    assert "starts now (Slurm's estimate), runs 25 s (90 %" in chosen
    assert "3 recorded run(s) on partition slow" in chosen
    assert runner_up.startswith("placement runner-up fast: finishes in 70 s at 2026-03-04T10:01:10")
    assert "starts in 60 s at 2026-03-04T10:01:00 (Slurm's estimate), runs 10 s" in runner_up


def test_a_short_queue_leaves_the_fast_partition_first():
    placed = place(spin(), Runner([(ESTIMATE, answer(5, "fast")), (ESTIMATE, answer(0, "slow"))]))
    assert placed["partition"] == "fast" and placed["notes"][1].startswith("placement runner-up slow")


def test_the_pipeline_writes_the_chosen_partition_and_explains_it(catalog):
    now = time.time()
    runner = Runner([(ESTIMATE, answer(60, "fast", now)), (ESTIMATE, answer(0, "slow", now))])
    result = pipeline.optimise(spin(), catalog, RECORDS, runner=runner)
    assert "#SBATCH --partition=slow" in result.script.directives
    assert result.request.options.queue == "slow" and result.extra["placement"]["partition"] == "slow"
    assert [line for line in result.explanation if line.startswith("placement")] == result.extra["placement"]["notes"]
    # each estimate read the job's own script, with the candidate's partition and the job's resources
    fast, slow = runner.inputs
    assert "#SBATCH --partition=fast" in fast and "#SBATCH --partition=slow" in slow
    assert all("#SBATCH --exclusive" in text and "#SBATCH --time=00:05:00" in text for text in (fast, slow))


def test_a_hardware_class_takes_the_runs_of_its_nodes_on_any_partition():
    records = runs("old", 40.0, 42.0, hardware={"model": "Old CPU", "arch": "x86_64", "cores": 8}) + RECORDS
    old = "Old CPU|x86_64|8c|-"
    placed = place(spin(("fast", ("renamed", old))), Runner([(ESTIMATE, answer(0, "fast")),
                                                            (ESTIMATE, answer(0, "renamed"))]), records)
    assert placed["partition"] == "fast"
    renamed = placed["candidates"][1]
    assert renamed["run_s"] == pytest.approx(41.0, rel=0.01) and "of hardware class %s" % old in renamed["run_from"]


def test_a_scheduler_that_cannot_tell_counts_from_now_and_says_so():
    placed = place(spin(scheduler="pbspro"), Runner([]))
    assert placed["partition"] == "fast"
    assert all(row["start_in_s"] == 0 and row["fits"] is None for row in placed["candidates"])
    assert "starts now (now: PBS Pro cannot tell when a job would start)" in placed["notes"][0]


def test_without_a_runner_nobody_is_asked():
    placed = place(spin(), None)
    assert placed["candidates"][0]["start_from"] == "now: Slurm was not asked (no scheduler at hand here)"


class Silent(Runner):
    """A scheduler that does not answer in time."""

    def execute(self, argv, input_text=None):
        raise CommandTimeout("the scheduler did not answer within 30 s: sbatch --test-only", cmd=argv)


def test_a_scheduler_that_does_not_answer_is_counted_from_now_with_a_warning():
    placed = place(spin(), Silent([]))
    assert placed["partition"] == "fast"
    assert [row["start_from"] for row in placed["candidates"]] == ["now: Slurm could not be asked"] * 2
    assert [w.startswith("placement: Slurm could not be asked when the job would start in") for w in
            placed["warnings"]] == [True, True]


def test_the_deadline_covers_every_estimate():
    runner = Runner([(ESTIMATE, answer(60, "fast")), (ESTIMATE, answer(0, "slow"))])
    request = dsl.parse(spin())
    clock = iter([NOW, NOW + 2, NOW + 31])
    placed = placement.choose(request, lambda p: p, 1, RECORDS, runner, clock=lambda: next(clock), deadline_s=30)
    assert runner.history == [ESTIMATE] and placed["partition"] == "slow"
    assert placed["candidates"][1]["start_from"] == "now: no time left to ask Slurm (30 s for every partition)"


def test_a_partition_that_refuses_the_job_is_left_out_with_its_reason():
    placed = place(spin(), Runner([(ESTIMATE, (1, "", REFUSED)), (ESTIMATE, answer(30, "slow"))]))
    assert placed["partition"] == "slow" and placed["candidates"][0]["fits"] is False
    assert placed["notes"][-1] == "placement: partition fast cannot run the job: %s" % REFUSED


def test_no_partition_that_fits_is_refused_by_path():
    with pytest.raises(DslInvalid) as err:
        place(spin(), Runner([(ESTIMATE, (1, "", REFUSED))]))
    found = {p.path: p for p in err.value.problems}
    assert sorted(found) == ["job.placement.partitions[0].name", "job.placement.partitions[1].name"]
    assert found["job.placement.partitions[1].name"].message == "Slurm refuses the job in this partition: " + REFUSED
    assert found["job.placement.partitions[1].name"].value == "slow"


def test_without_recorded_runs_the_wall_time_limit_stands_in():
    placed = place(spin(), Runner([(ESTIMATE, answer(60, "fast")), (ESTIMATE, answer(0, "slow"))]), records=[])
    fast, slow = placed["candidates"]
    assert slow["run_s"] == 300 and slow["run_interval_s"] is None and "the wall time limit" in slow["run_from"]
    assert placed["partition"] == "slow" and fast["finish_in_s"] == 360


def test_without_any_run_time_the_earliest_start_wins():
    doc = spin()
    del doc["job"]["job_options"]["wall_time_limit"]
    placed = place(doc, Runner([(ESTIMATE, answer(60, "fast")), (ESTIMATE, answer(0, "slow"))]), records=[])
    assert placed["partition"] == "slow" and "by the earliest start (no run time is known anywhere)" in \
        placed["notes"][0]


def problems(doc):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(doc)
    return {p.path: p for p in err.value.problems}


def test_the_dsl_rules_of_placement():
    assert "names a partition listed before" in problems(spin(("a", "b", "a")))[
        "job.placement.partitions[2].name"].message
    assert problems(spin(partition="a"))["job.job_options.partition"].message == \
        "names the partition that job.placement chooses"
    assert "a run on the host (local) has none" in problems(spin(scheduler="local"))["job.placement"].message
    assert "job.placement.partitions" in problems({"job": dict(spin()["job"], placement={"partitions": []})})
