"""Following a job through its requeues (job.resilience): a job requeued at its time limit goes back to PENDING
(Reason=BeginTime, Restarts=1), which is not its end; batch_job reports each run between requeues (state, reason,
exit code, nodes) and the restart count with where it comes from. The answers are `scontrol show job -o` lines of a
real job of the multi-node test Slurm (22.05), requeued by its own batch script (tests/data/scontrol/requeued.txt)."""

from __future__ import annotations

import os

from fake_runner import FakeRunner
from helpers import ROOT
from test_follow import Clock

from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Job, Request, segments_of
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import JobStatus
from ansible_collections.sodalite.modak.plugins.plugin_utils import progress

SHOW = ["scontrol", "show", "job", "-o", "2"]
LINES = dict(line.split(" ", 1) for line in open(os.path.join(ROOT, "tests", "data", "scontrol", "requeued.txt"))
             .read().splitlines() if line.strip() and not line.startswith("#"))
FROM = "scontrol show job: Restarts="


def answers(*names):
    return [(SHOW, (0, LINES[name] + "\n", "")) for name in names]


def follow(tmp_path, monkeypatch, names):
    monkeypatch.setattr(Job, "clock", Clock())
    job = Job(Request(job_id="2", scheduler="slurm", state="query", chdir=str(tmp_path), poll_interval=8),
              FakeRunner(answers(*names)))
    status = job.follow(JobStatus(job_id="2", state="PENDING", active=True))
    return job, status


def test_a_requeued_job_is_followed_to_its_real_end(tmp_path, monkeypatch):
    job, status = follow(tmp_path, monkeypatch, ["running", "pending", "running-again", "completed"])
    assert status.state == "COMPLETED" and status.restarts == 3
    assert job.result["restarts"] == 3 and job.result["restarts_from"] == FROM
    # the polls saw the first requeue (PENDING, BeginTime), then the count grew from 1 to 3 between two of them
    assert job.result["segments"] == [
        {"restart": 0, "nodes": "mn[1-2]", "state": "PENDING", "reason": "BeginTime", "exit_code": None, "from": FROM},
        {"restart": 1, "nodes": "mn[1-2]", "state": "REQUEUED", "reason": None, "exit_code": None, "from": FROM},
        {"restart": 3, "nodes": "mn[1-2]", "state": "COMPLETED", "reason": None, "exit_code": 0, "from": FROM}]


def test_pending_after_a_requeue_is_not_an_end(tmp_path, monkeypatch):
    job, status = follow(tmp_path, monkeypatch, ["running", "pending", "pending", "completed"])
    assert [p["state"] for p in job.history] == ["RUNNING", "PENDING", "PENDING", "COMPLETED"]
    assert [(s["restart"], s["state"]) for s in job.result["segments"]] == [(0, "PENDING"), (1, "REQUEUED"),
                                                                            (3, "COMPLETED")]


def test_a_job_never_requeued_is_one_run():
    polls = [{"state": "RUNNING", "restarts": 0, "nodes": "mn1"},
             {"state": "COMPLETED", "restarts": 0, "nodes": "mn1", "exit_code": 0}]
    assert segments_of(polls, FROM) == [{"restart": 0, "nodes": "mn1", "state": "COMPLETED", "reason": None,
                                         "exit_code": 0, "from": FROM}]


def test_the_progress_line_says_the_restart():
    assert progress.line("h", "job 2 (limited)", "PENDING", reason="BeginTime", restarts=1) == \
        "h: job 2 (limited) PENDING, restart 1 (BeginTime)"
