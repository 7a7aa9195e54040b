"""The batch_job ledger under concurrency: real processes, real local jobs, one chdir (figures: docs/robustness.md)."""

from __future__ import annotations

import json
import multiprocessing
import os

from robustkit import record

from ansible_collections.sodalite.modak.plugins.module_utils import job_control as job

TASKS = 32


def _submit(args):
    barrier, script, chdir = args
    barrier.wait()
    result = job.run(job.Request(script=script, scheduler="local", chdir=chdir, wait=True, poll_interval=0.05,
                                 rerun=False))
    return result["changed"], result["job_id"], result["state"]


def _run_all(scripts, chdir):
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(len(scripts))
        with ctx.Pool(len(scripts)) as pool:
            return pool.map(_submit, [(barrier, script, chdir) for script in scripts])


def test_32_concurrent_submissions_keep_every_ledger_entry_and_none_runs_twice(tmp_path):
    scripts = []
    for i in range(TASKS):
        path = tmp_path / ("job%02d.sh" % i)
        path.write_text("#!/bin/bash\necho job %d\n" % i)
        scripts.append(str(path))
    first = _run_all(scripts, str(tmp_path))
    assert all(changed and state == "COMPLETED" for changed, _id, state in first), first
    with open(tmp_path / ".modak" / "jobs.json") as handle:
        ledger = json.load(handle)
    lost = TASKS - len(ledger)
    again = _run_all(scripts, str(tmp_path))
    rerun = [job_id for changed, job_id, _state in again if changed]
    record("ledger", submissions=2 * TASKS, entries=len(ledger), lost=lost, submitted_again=len(rerun))
    assert lost == 0, "%d of %d ledger entries lost" % (lost, TASKS)
    assert sorted(entry["job_id"] for entry in ledger.values()) == sorted(job_id for _c, job_id, _s in first)
    assert not rerun, "%d of %d finished jobs were submitted again" % (len(rerun), TASKS)
    assert len(os.listdir(tmp_path)) == TASKS + 1 + 2 * TASKS    # the scripts, .modak, stdout and stderr per job
