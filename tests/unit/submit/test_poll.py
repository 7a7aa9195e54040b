"""poll_interval has a floor: waiting for a job never busy-loops the scheduler."""

from __future__ import annotations

import dataclasses
import os
import signal

import pytest
from helpers import directory_with

from ansible_collections.sodalite.modak.plugins.module_utils import job_control as job


class Clock(object):
    """Time that passes only when somebody sleeps."""

    def __init__(self):
        self.now = 1000.0

    def time(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0
        self.now += seconds


@pytest.mark.parametrize("interval", [0, -1, 0.001])
def test_waiting_with_a_tiny_poll_interval_queries_at_most_once_per_floor(tmp_path, interval):
    """A job that runs 2 s (of the test's clock): one query after the submission, then one per second (the
    floor), and one spare."""
    script = tmp_path / "done.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    run = job.Job(job.Request(script=str(script), scheduler="local", wait=True, poll_interval=interval))
    run.clock = clock = Clock()
    ends = clock.now + 2
    calls = []
    status = run._status

    def counted(job_id):
        calls.append(job_id)
        real = status(job_id)
        if clock.now < ends:        # still running by the test's clock
            return dataclasses.replace(real, state="RUNNING", active=True, exit_code=None)
        while real.active:          # the real job (true) ends at once
            real = status(job_id)
        return real
    run._status = counted
    result = run.execute()
    assert result["state"] == "COMPLETED"
    assert len(calls) <= 4, "%d status queries in 2 s" % len(calls)


def test_wait_timeout_ends_the_wait_by_the_clock(tmp_path):
    script = tmp_path / "done.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    run = job.Job(job.Request(script=str(script), scheduler="local", wait=True, poll_interval=5, wait_timeout=60))
    run.clock = clock = Clock()
    status = run._status
    run._status = lambda job_id: dataclasses.replace(status(job_id), state="RUNNING", active=True, exit_code=None)
    started = clock.now
    with pytest.raises(job.JobFailed, match="still RUNNING after wait_timeout=60 s"):
        run.execute()
    assert 60 <= clock.now - started < 66


def test_a_local_job_that_ends_as_its_status_is_read_is_seen_with_its_exit_status(tmp_path, monkeypatch):
    """The job writes its exit status and ends between the two reads of a status query: it is COMPLETED with its
    status, not FAILED without one (the reads were the status file first, then whether the job lives: a loaded
    machine failed a suite run so)."""
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import local
    script = tmp_path / "done.sh"
    script.write_text("#!/bin/bash\nsleep 30\n")
    run = job.Job(job.Request(script=str(script), scheduler="local", wait=False))
    job_id = run.execute()["job_id"]
    state = tmp_path / ".modak"
    real_alive = local._alive

    def ends_now(pid, started=None):
        if str(pid) == job_id:                       # the job writes its status and ends, just now
            (state / ("%s.rc" % job_id)).write_text("0\n")
            os.kill(pid, signal.SIGKILL)
            return False
        return real_alive(pid, started)
    monkeypatch.setattr(local, "_alive", ends_now)
    status = run._status(job_id)
    assert (status.state, status.exit_code, status.active) == ("COMPLETED", 0, False)


@pytest.mark.parametrize("mode, group, refused", [(0o2770, 4242, True), (0o777, None, True), (0o1777, None, False)])
def test_a_working_directory_where_others_may_rename_files_is_refused(mode, group, refused, tmp_path):
    """Hardening, round five, item 5: batch_job's chdir (modak submit --chdir) was never checked: in a 2770 directory
    of an untrusted group a member swapped the job's output for a link 5 times in 5 and the job wrote into the
    user's 0600 file. The working directory now passes the trust model of the script's directory."""
    work = directory_with(tmp_path / "work", mode, group)
    home = tmp_path / "home"
    home.mkdir()
    script = home / "job.sh"
    script.write_text("#!/bin/bash\necho hi\n")
    run = job.Job(job.Request(script=str(script), scheduler="local", chdir=str(work), wait=True, poll_interval=1))
    if refused:
        with pytest.raises(job.SubmitError) as info:
            run.execute()
        assert "refusing to submit" in str(info.value) and str(work) in str(info.value)
        assert os.listdir(str(work)) == []
    else:
        assert run.execute()["state"] == "COMPLETED"
