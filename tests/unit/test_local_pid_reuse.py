"""A local job whose process died without its exit-code file, its pid since taken by an unrelated process: a
query does not report it RUNNING and a cancel does not signal that process's group (the start time recorded at
submission tells the processes apart)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import local


@pytest.fixture
def unrelated():
    """A process of its own session (its pid is its group), as the reused pid's new owner."""
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def died_job(tmp_path, pid, started):
    state = tmp_path / local.STATE_DIR
    state.mkdir()
    (state / ("%d.pid" % pid)).write_text("%d\njob\n\n\n%s\n" % (pid, started))
    return local.Local(ProcessRunner(), chdir=str(tmp_path), job_name="job")


def test_a_reused_pid_is_not_the_job(tmp_path, unrelated):
    other_start = str(int(local.start_time(unrelated.pid)) - 100)      # the job's process started earlier
    backend = died_job(tmp_path, unrelated.pid, other_start)
    status = backend.status(str(unrelated.pid))
    assert status.state != "RUNNING" and not status.active
    backend.cancel(str(unrelated.pid))
    time.sleep(0.2)
    assert unrelated.poll() is None                   # not signalled


def test_the_jobs_own_process_is_still_followed_and_cancelled(tmp_path, unrelated):
    backend = died_job(tmp_path, unrelated.pid, local.start_time(unrelated.pid))
    assert backend.status(str(unrelated.pid)).state == "RUNNING"
    backend.cancel(str(unrelated.pid))
    assert unrelated.wait(timeout=5) != 0


def test_submit_records_the_start_time(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("sleep 0.2\n")
    backend = local.Local(ProcessRunner(), chdir=str(tmp_path), job_name="job")
    job_id = backend.submit(str(script))
    lines = (tmp_path / local.STATE_DIR / ("%s.pid" % job_id)).read_text().splitlines()
    assert len(lines) == 5 and lines[4].isdigit()
    for _attempt in range(50):
        if not backend.status(job_id).active:
            break
        time.sleep(0.1)
    assert backend.status(job_id).state == "COMPLETED"
    assert os.path.exists(str(tmp_path / ("job.o%s" % job_id)))
