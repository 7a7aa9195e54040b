"""The Grid Engine backend against a real Grid Engine: directives read back by `qstat -j`, and
submit -> run -> accounting round trips through the batch_job module."""

from __future__ import annotations

import os
import re
import subprocess

from .conftest import SLOTS, batch_job

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import gridengine as ge

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def optimised(tmp_path, options, executable="/bin/echo", arguments="hello from grid engine", mpi_ranks=1):
    doc = {"job": {"job_options": dict({"job_name": "ge"}, **options),
                   "application": {"executable": executable, "arguments": arguments, "mpi_ranks": mpi_ranks},
                   "target": {"job_scheduler_type": "gridengine"}}}
    result = pipeline.optimise(doc, ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml")))
    path = tmp_path / result.script.filename
    path.write_text(result.script.text)
    return str(path), result


def qstat_j(env, job_id):
    proc = subprocess.run(["qstat", "-j", job_id], env=env, capture_output=True, text=True, check=True)
    return ge.parse_fields(proc.stdout)[0], proc.stdout


def test_directives_are_read_back_by_qstat(gridengine, play, tmp_path):
    first, _result = optimised(tmp_path, {"job_name": "ge-first"})
    proc, r = play(batch_job(script=first, extra_args=["-h"]))
    assert r and not r.get("failed"), (proc.stdout, r)
    script, result = optimised(tmp_path, {
        # one node: memory per node is divided among its slots (without a node count it would be refused)
        "job_name": "ge-read", "node_count": 1, "wall_time_limit": "01:30:00", "memory_limit": "2G", "queue": "all.q",
        "job_array": "1-3:2", "job_dependency": "afterany:%s" % r["job_id"], "defer_job": "2030-01-02T03:04",
        "request_event_notification": "BEGIN,END", "email_address": "me@example.org",
        "standard_output_file": "ge-%j.out", "copy_environment_variable": "A=1",
    }, mpi_ranks=SLOTS)
    assert result.script.scheduler == "gridengine"
    proc, s = play(batch_job(script=script, extra_args=["-h"]))
    assert s and not s.get("failed"), (proc.stdout, s)
    try:
        fields, text = qstat_j(gridengine, s["job_id"])
        assert fields["job_name"] == "ge-read", text
        assert "h_rt=5400" in fields["hard resource_list"] and "h_vmem=" in fields["hard resource_list"], text
        assert fields["hard_queue_list"] == "all.q", text
        assert fields["job-array tasks"].startswith("1-3:2"), text
        assert re.search(r"^jid_predecessor_list[^:]*:\s+%s$" % r["job_id"], text, re.M), text
        assert fields["mail_options"] == "be" and fields["mail_list"] == "me@example.org", text
        assert fields["stdout_path_list"].endswith("ge-$JOB_ID.out") and fields["merge"] == "y", text
        assert fields["parallel environment"].startswith("smp range: %d" % SLOTS), text
        assert "A=1" in fields["env_list"].split(","), text
        assert re.search(r"^execution_time:\s+.*2030", text, re.M), text
        assert fields["context"] == "modak=%s" % ge_digest(script, ["-h"]), text       # content and extra args
    finally:
        subprocess.run(["qdel", s["job_id"], r["job_id"]], env=gridengine, capture_output=True, check=False)


def ge_digest(script, extra_args=()):
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import digest
    with open(script) as handle:
        return digest(handle.read(), extra_args)


def test_round_trip_completed_with_output(gridengine, play, tmp_path):
    script, _result = optimised(tmp_path, {"job_name": "ge-hello", "standard_output_file": "hello.out"})
    proc, r = play(batch_job(script=script, wait=True, poll_interval=0.5, wait_timeout=120))
    assert r and not r.get("failed"), (proc.stdout, r)
    assert (r["state"], r["exit_code"], r["scheduler"]) == ("COMPLETED", 0, "gridengine"), r
    assert open(str(tmp_path / "hello.out")).read() == "hello from grid engine\n"
    assert r["cmd"][:4] == ["qsub", "-terse", "-ac", "modak=%s" % ge_digest(script)]
    proc, again = play(batch_job(script=script, rerun=False))
    assert again["changed"] is False and again["job_id"] == r["job_id"], again


def test_round_trip_failed_exit_status(gridengine, play, tmp_path):
    script, _result = optimised(tmp_path, {"job_name": "ge-fail"}, executable="/bin/sh", arguments="-c 'exit 3'")
    proc, r = play(batch_job(script=script, wait=True, poll_interval=0.5, wait_timeout=120, fail_on_job_error=False))
    assert r and not r.get("failed"), (proc.stdout, r)
    assert (r["state"], r["exit_code"]) == ("FAILED", 3), r


def test_running_job_is_found_then_cancelled(gridengine, play, tmp_path):
    script, _result = optimised(tmp_path, {"job_name": "ge-sleep"}, executable="/bin/sleep", arguments="120")
    proc, r = play(batch_job(script=script))
    assert r and r["changed"], (proc.stdout, r)
    proc, again = play(batch_job(script=script))
    assert again["changed"] is False and again["job_id"] == r["job_id"], again      # found by qstat -j <name>
    proc, c = play(batch_job(script=script, state="absent", wait=True, poll_interval=0.5, wait_timeout=60))
    assert c["changed"] and c["state"] == "CANCELLED" and c["cmd"] == ["qdel", r["job_id"]], c


def test_check_mode_verifies_without_submitting(gridengine, play, tmp_path):
    script, _result = optimised(tmp_path, {"job_name": "ge-check"})
    # other tests submit at the same time: only this test's job name counts
    before = [line for line in subprocess.run(["qstat", "-u", "*"], env=gridengine, capture_output=True, text=True,
                                              check=False).stdout.splitlines() if "ge-check" in line]
    proc, r = play(batch_job(script=script), check=True)
    assert r and not r.get("failed"), (proc.stdout, r)
    assert r["cmd"][:4] == ["qsub", "-terse", "-w", "v"] and r["job_id"] is None, r
    after = [line for line in subprocess.run(["qstat", "-u", "*"], env=gridengine, capture_output=True, text=True,
                                             check=False).stdout.splitlines() if "ge-check" in line]
    assert after == before == []


def test_wall_time_limit_ends_the_job_as_timeout(gridengine, play, tmp_path):
    script, _result = optimised(tmp_path, {"job_name": "ge-slow", "wall_time_limit": "00:00:02"},
                                executable="/bin/sleep", arguments="60")
    proc, r = play(batch_job(script=script, wait=True, poll_interval=0.5, wait_timeout=90, fail_on_job_error=False))
    assert r and not r.get("failed"), (proc.stdout, r)
    assert r["state"] == "TIMEOUT", r


def test_a_job_carrying_our_key_with_another_script_is_not_adopted(gridengine, play, tmp_path):
    """A held job with the same name and a forged context (our content hash) but another script is not taken as
    ours: the real job is submitted, and qstat -j's owner, job_name and script_file identify it."""
    script, _result = optimised(tmp_path, {"job_name": "ge-forged"})
    decoy = tmp_path / "decoy.sge"
    decoy.write_text("#!/bin/bash\n#$ -N ge-forged\n#$ -cwd\nhostname\n")
    forged = subprocess.run(["qsub", "-terse", "-h", "-ac", "modak=%s" % ge_digest(script, ["-h"]), str(decoy)],
                            env=gridengine, capture_output=True, text=True, check=True).stdout.strip()
    try:
        proc, r = play(batch_job(script=script, extra_args=["-h"]))
        assert r and r["changed"] and r["job_id"] != forged, (proc.stdout, r)
        fields, text = qstat_j(gridengine, r["job_id"])
        assert fields["script_file"] == script and fields["job_name"] == "ge-forged", text
        proc, again = play(batch_job(script=script, extra_args=["-h"]))
        assert again["changed"] is False and again["job_id"] == r["job_id"], again
    finally:
        subprocess.run(["qdel", forged] + ([r["job_id"]] if r and r.get("job_id") else []), env=gridengine,
                       capture_output=True, check=False)


def test_a_forged_key_in_the_script_is_refused(gridengine, play, tmp_path):
    script = tmp_path / "forge.sge"
    script.write_text("#!/bin/bash\n#$ -N forge\n#$ -ac modak=0123\nhostname\n")
    proc, r = play(batch_job(script=str(script)))
    assert r["failed"] and "reserved" in r["msg"] and not r.get("job_id"), (proc.stdout, r)
