"""batch_job, the optimised_job role and deploy.yml against a real single-node Slurm (and its PBS wrappers)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

import pytest

from helpers import EXAMPLES as EXAMPLE_PATHS, ROOT

from .conftest import queued_from

EXAMPLES = [os.path.basename(path) for path in EXAMPLE_PATHS]   # the DSLs valid on their own


def write(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def submit_task(**args):
    return ("- name: Batch job\n  sodalite.modak.batch_job: %s\n  register: r\n  ignore_errors: true\n"
            % json.dumps(args))


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_slurm_script_passes_test_only(slurm, play, tmp_path, example):
    """optimise the example for Slurm, then batch_job in check mode runs sbatch --test-only (nothing is queued)."""
    from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    doc = dsl.load_file(os.path.join(ROOT, "examples", example))
    doc["job"].setdefault("target", {})["job_scheduler_type"] = "slurm"   # the Slurm script of every example
    result = pipeline.optimise(doc, ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml")))
    script = write(tmp_path / result.script.filename, result.script.text)
    nodes = [line for line in result.script.directives if line.startswith("#SBATCH --nodes=")]
    # the test cluster has one node and no GPU: a multi-node request is checked on one node and a GPU request
    # without GPUs (command-line options override the directives; everything else is checked as written)
    extra = ["--nodes=1"] if nodes and nodes[0] != "#SBATCH --nodes=1" else []
    if any(line.startswith("#SBATCH --gres=gpu") for line in result.script.directives):
        extra.append("--gres=none")
    assert queued_from(tmp_path) == []
    proc, r = play(submit_task(script=script, extra_args=extra), check=True)
    assert r is not None, proc.stdout + proc.stderr
    assert not r.get("failed"), r
    assert r["cmd"][:2] == ["sbatch", "--test-only"]
    assert "to start at" in r["msg"], r
    assert r["job_id"] is None
    assert queued_from(tmp_path) == []


def test_deploy_runs_to_completed_and_fetches_output(slurm, play, tmp_path):
    dsl_file = tmp_path / "hello.yaml"
    dsl_file.write_text(
        "job:\n  job_options:\n    job_name: hello\n    standard_output_file: hello-%%j.out\n"
        "  application:\n    executable: /bin/echo\n    arguments: hello from a real slurm job\n"
        "  target:\n    job_scheduler_type: slurm\n    work_dir: %s\n" % (tmp_path / "work"))
    deploy = os.path.join(ROOT, "playbooks", "deploy.yml")
    extra = {"dsl_file": str(dsl_file), "optimised_job_output_dir": str(tmp_path / "out"),
             "optimised_job_poll_interval": 0.3}
    proc, _result = play(None, extra_vars=extra, playbook=deploy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "'state': 'COMPLETED'" in proc.stdout or '"state": "COMPLETED"' in proc.stdout, proc.stdout
    outputs = list((tmp_path / "work").glob("hello-*.out"))
    assert len(outputs) == 1
    assert outputs[0].read_text() == "hello from a real slurm job\n"
    fetched = tmp_path / "out" / "results" / "localhost" / outputs[0].name
    assert fetched.read_text() == "hello from a real slurm job\n"
    # a second run changes nothing: same script, job already ran (role default rerun: false)
    again, _result = play(None, extra_vars=extra, playbook=deploy)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "changed=0" in again.stdout, again.stdout
    assert len(list((tmp_path / "work").glob("hello-*.out"))) == 1


def test_job_that_exits_3_reports_failed_and_exit_code_3(slurm, play, tmp_path):
    script = write(tmp_path / "three.sbatch", "#!/bin/bash\n#SBATCH --job-name=three\n#SBATCH --output=three-%j.out\n"
                   "echo before exit\nexit 3\n")
    proc, r = play(submit_task(script=script, wait=True, poll_interval=0.3, fail_on_job_error=False))
    assert r["state"] == "FAILED" and r["exit_code"] == 3 and not r.get("failed"), r
    assert open(r["stdout_path"]).read() == "before exit\n"
    proc, r = play(submit_task(script=script, wait=True, poll_interval=0.3, force=True))
    assert r["failed"] and r["exit_code"] == 3 and r["state"] == "FAILED", r
    assert "ended FAILED with exit code 3" in r["msg"]


def test_rejected_submission_fails_with_slurms_message(slurm, play, tmp_path):
    script = write(tmp_path / "big.sbatch", "#!/bin/bash\n#SBATCH --job-name=big\n#SBATCH --ntasks=1\n"
                   "#SBATCH --cpus-per-task=%d\nhostname\n" % (slurm["max_cpus"] * 4))
    proc, r = play(submit_task(script=script))
    assert r["failed"], r
    # more CPUs than any node has: Slurm's wording depends on the node sizes of the partition
    assert ("Batch job submission failed: More processors requested than permitted" in r["msg"]
            or "Batch job submission failed: Requested node configuration is not available" in r["msg"]), r
    assert r["cmd"][:2] == ["sbatch", "--parsable"]


def test_cancel_running_job_gives_cancelled_and_no_duplicate(slurm, play, tmp_path):
    script = write(tmp_path / "long.sbatch", "#!/bin/bash\n#SBATCH --job-name=long\n#SBATCH --output=long-%j.out\n"
                   "sleep 120\n")
    proc, first = play(submit_task(script=script))
    assert first["changed"] and first["state"] in ("PENDING", "RUNNING"), first
    proc, second = play(submit_task(script=script))
    assert not second["changed"] and second["job_id"] == first["job_id"], second   # same job still queued
    proc, forced = play(submit_task(script=script, force=True))
    assert forced["changed"] and forced["job_id"] != first["job_id"], forced
    for job in (forced["job_id"], first["job_id"]):
        proc, r = play(submit_task(job_id=job, scheduler="slurm", state="absent", wait=True, poll_interval=0.3,
                                   wait_timeout=60))
        assert r["changed"] and r["state"] == "CANCELLED" and r["cmd"] == ["scancel", job], r
    proc, r = play(submit_task(job_id=first["job_id"], scheduler="slurm", state="absent"))
    assert not r["changed"] and r["state"] == "CANCELLED", r        # already gone: nothing to do


def test_pbs_script_through_qsub_runs_to_completion(slurm, play, tmp_path):
    script = write(tmp_path / "pbsjob.sh", "#!/bin/bash\n#PBS -N pbsjob\n#PBS -l nodes=1:ppn=1\n"
                   "#PBS -l walltime=00:01:00\necho \"pbs says hi from $PBS_JOBNAME\"\n")
    proc, r = play(submit_task(script=script, wait=True, poll_interval=0.3))
    assert not r.get("failed"), r
    assert r["scheduler"] == "torque" and r["cmd"] == ["qsub", script]
    assert r["state"] == "COMPLETED"
    assert open(r["stdout_path"]).read() == "pbs says hi from pbsjob\n"


def test_local_job_runs_and_cancels(play, tmp_path):
    script = write(tmp_path / "loc.sh", "#!/bin/bash\necho local out\necho local err >&2\nexit 0\n")
    proc, r = play(submit_task(script=script, wait=True, poll_interval=0.1))
    assert r["scheduler"] == "local" and r["state"] == "COMPLETED" and r["exit_code"] == 0, r
    assert open(r["stdout_path"]).read() == "local out\n" and open(r["stderr_path"]).read() == "local err\n"
    slow = write(tmp_path / "slow.sh", "#!/bin/bash\nsleep 60\n")
    proc, r = play(submit_task(script=slow))
    assert r["state"] == "RUNNING", r
    proc, c = play(submit_task(job_id=r["job_id"], scheduler="local", chdir=str(tmp_path), state="absent", wait=True,
                               poll_interval=0.1, wait_timeout=10))
    assert c["changed"] and c["state"] == "CANCELLED", c


def test_stopped_slurmctld_gives_clear_error_not_hang(slurm, play, tmp_path):
    """A client whose controller is down: the test cluster's own configuration with the controller's port moved to
    one where nothing listens, so the client meets a stopped slurmctld while the shared controller keeps serving the
    other tests of the run (which stopping it would fail)."""
    del slurm
    with socket.socket() as sock:          # a port nobody listens on: bound here, never listened on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        conf = tmp_path / "slurm.conf"
        with open("/etc/slurm/slurm.conf", encoding="utf-8") as handle:
            lines = [line for line in handle if not line.startswith("SlurmctldPort=")]
        conf.write_text("".join(lines) + "SlurmctldPort=%d\n" % port)
        env = dict(os.environ, SLURM_CONF=str(conf))
        assert subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True,
                              check=False).stdout.find("is UP") < 0
        script = write(tmp_path / "nochd.sbatch", "#!/bin/bash\n#SBATCH --job-name=nochd\nhostname\n")
        started = time.time()
        proc, r = play(submit_task(script=script, command_timeout=8), timeout=120, env=env)
        took = time.time() - started
    assert r["failed"], (proc.stdout, r)
    assert "Unable to contact slurm controller" in r["msg"] or "did not answer within 8 s" in r["msg"], r
    assert took < 60
