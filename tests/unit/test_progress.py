"""plugin_utils.progress: the progress line and the wait loop of the action plugins (clock and sleep faked)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.plugin_utils import progress


class Clock(object):
    def __init__(self):
        self.now = 100.0
        self.sleeps = []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_line_names_host_subject_state_times_and_last_output():
    assert progress.line("h1", "job 42 (train)", "RUNNING", ran=83, waited=3725, last="epoch 2") == (
        "h1: job 42 (train) RUNNING, ran 0:01:23, waited 1:02:05: epoch 2")
    assert progress.line("h1", "job 42 (train)", "PENDING", waited=0) == "h1: job 42 (train) PENDING, waited 0:00:00"
    assert progress.clock(90061) == "25:01:01"


def test_follow_queries_until_done_and_reports_each_poll():
    clock = Clock()
    answers = iter([{"active": True, "state": "RUNNING"}, {"active": False, "state": "COMPLETED"}])
    reported = []
    last, timed_out = progress.follow(lambda: next(answers), lambda r: not r["active"],
                                      lambda r, waited: reported.append((r["state"], waited)), 2, 60, clock.now,
                                      first={"active": True, "state": "PENDING"}, sleep=clock.sleep,
                                      now=lambda: clock.now)
    assert last["state"] == "COMPLETED" and not timed_out
    assert reported == [("RUNNING", 2.0), ("COMPLETED", 4.0)] and clock.sleeps == [2, 2]


def test_follow_stops_at_the_deadline_and_says_so():
    clock = Clock()
    last, timed_out = progress.follow(lambda: {"active": True, "state": "RUNNING"}, lambda r: not r["active"],
                                      lambda r, waited: None, 4, 10, clock.now, first={"active": True},
                                      sleep=clock.sleep, now=lambda: clock.now)
    assert timed_out and last["state"] == "RUNNING" and clock.sleeps == [4, 4, 2]


def test_follow_stops_at_a_failed_query():
    clock = Clock()
    last, timed_out = progress.follow(lambda: {"failed": True, "msg": "scontrol timed out"}, lambda r: False,
                                      lambda r, waited: None, 1, 10, clock.now, first={"active": True},
                                      sleep=clock.sleep, now=lambda: clock.now)
    assert last["failed"] and not timed_out and clock.sleeps == [1]


def test_progress_lines_leave_a_json_stdout_alone():
    """A program parses the JSON callbacks' stdout (xOpera's json_ansible_callback): the lines go to stderr there."""
    assert [progress.to_stderr(name) for name in ("default", "ansible.builtin.default", None, "community.general.yaml")] == [
        False, False, False, False]
    assert all(progress.to_stderr(name) for name in ("json", "ansible.posix.json", "ansible.posix.jsonl",
                                                     "json_ansible_callback"))


def test_a_waiting_job_says_the_schedulers_reason_and_expected_start():
    assert progress.line("login1", "job 42 (train)", "PENDING", ran=0, waited=3, reason="Priority",
                         expected_start="2026-11-25T15:00:00") == (
        "login1: job 42 (train) PENDING (Priority, expected start 2026-11-25T15:00:00), ran 0:00:00, waited 0:00:03")
    assert progress.line("h", "job 1 (x)", "PENDING", reason="Dependency") == "h: job 1 (x) PENDING (Dependency)"
