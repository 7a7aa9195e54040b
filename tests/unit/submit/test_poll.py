"""poll_interval has a floor: waiting for a job never busy-loops the scheduler."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import job_control as job


@pytest.mark.parametrize("interval", [0, -1, 0.001])
def test_waiting_with_a_tiny_poll_interval_queries_at_most_once_per_floor(tmp_path, interval):
    script = tmp_path / "nap.sh"
    script.write_text("#!/bin/bash\nsleep 2\n")
    run = job.Job(job.Request(script=str(script), scheduler="local", wait=True, poll_interval=interval))
    calls = []
    status = run._status

    def counted(job_id):
        calls.append(job_id)
        return status(job_id)
    run._status = counted
    result = run.execute()
    assert result["state"] == "COMPLETED"
    # 2 s of job: one query after the submission, then one per second (the floor), and one spare
    assert len(calls) <= 4, "%d status queries in 2 s" % len(calls)
