"""Following a job: the pause starts short and doubles up to poll_interval, and a status query the scheduler does
not answer (a controller restarting) is asked again for STATUS_RETRY_S in a row before the wait fails."""

from __future__ import annotations

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils import job_control
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Job, JobFailed, Request
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import JobStatus
from ansible_collections.sodalite.modak.plugins.plugin_utils import progress

SHOW = ["scontrol", "show", "job", "-o", "42"]
DOWN = (1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")


def _show(state):
    return (0, "JobId=42 JobName=train JobState=%s RunTime=00:00:05 ExitCode=0:0 StdOut=/x StdErr=/x\n" % state, "")


class Clock(object):
    def __init__(self):
        self.now = 100.0
        self.sleeps = []

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def _follow(tmp_path, monkeypatch, answers, poll_interval=8, wait_timeout=3600):
    clock = Clock()
    monkeypatch.setattr(Job, "clock", clock)
    job = Job(Request(job_id="42", scheduler="slurm", state="query", chdir=str(tmp_path), poll_interval=poll_interval,
                      wait_timeout=wait_timeout), FakeRunner([(SHOW, answer) for answer in answers]))
    return job, job.follow(JobStatus(job_id="42", state="PENDING", active=True)), clock


def test_the_pause_starts_at_the_floor_and_doubles_up_to_poll_interval(tmp_path, monkeypatch):
    _job, status, clock = _follow(tmp_path, monkeypatch, [_show("RUNNING")] * 5 + [_show("COMPLETED")])
    assert status.state == "COMPLETED"
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_a_short_job_is_seen_ending_within_seconds(tmp_path, monkeypatch):
    _job, status, clock = _follow(tmp_path, monkeypatch, [_show("RUNNING"), _show("COMPLETED")], poll_interval=30)
    assert status.state == "COMPLETED" and sum(clock.sleeps) == 3.0


def test_a_controller_that_does_not_answer_for_a_while_does_not_end_the_wait(tmp_path, monkeypatch):
    job, status, clock = _follow(tmp_path, monkeypatch, [_show("RUNNING"), DOWN, DOWN, DOWN, _show("COMPLETED")])
    assert status.state == "COMPLETED" and job.result["status_errors"] == 3
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 8.0]


def test_a_controller_that_stays_down_fails_the_wait_naming_the_job(tmp_path, monkeypatch):
    with pytest.raises(JobFailed) as info:
        _follow(tmp_path, monkeypatch, [_show("RUNNING"), DOWN])
    message = str(info.value)
    assert message.startswith("the state of job 42 could not be read for %d s" % job_control.STATUS_RETRY_S)
    assert "Unable to contact slurm controller" in message and "state=query job_id=42" in message


class Ticks(object):
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def _progress(answers, retry_for=60.0):
    ticks = Ticks()
    queue = list(answers)
    return progress.follow(lambda: queue.pop(0) if len(queue) > 1 else queue[0], lambda r: not r["active"],
                           lambda r, waited: None, 8, 3600, 0.0, first={"active": True}, sleep=ticks.sleep,
                           now=lambda: ticks.now, start=1.0, transient=lambda r: r.get("status_unread"),
                           retry_for=retry_for), ticks


UNREAD = {"failed": True, "status_unread": True, "msg": "scontrol failed (rc 1): connect failure"}


def test_the_action_wait_backs_off_and_rides_out_unanswered_queries():
    (last, timed_out), ticks = _progress([{"active": True}, UNREAD, UNREAD, {"active": False, "state": "COMPLETED"}])
    assert not timed_out and last["state"] == "COMPLETED" and ticks.sleeps == [1.0, 2.0, 4.0, 8.0]


def test_the_action_wait_ends_on_a_persistent_failure_and_at_once_on_a_failed_job():
    (last, timed_out), ticks = _progress([{"active": True}, UNREAD], retry_for=20.0)
    assert last is UNREAD and not timed_out and sum(ticks.sleeps) - 1.0 >= 20.0
    failed = {"failed": True, "state": "FAILED", "msg": "job 42 ended FAILED"}
    (last, _timed_out), ticks = _progress([failed])
    assert last is failed and ticks.sleeps == [1.0]
