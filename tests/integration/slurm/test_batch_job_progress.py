"""batch_job with wait=true shows the job's progress in ansible-playbook's output, poll by poll (real runs)."""

from __future__ import annotations

import re

from .test_batch_job_slurm import submit_task, write

# 'localhost: job 42 (prog) RUNNING, ran 0:00:03, waited 0:00:04: tick 3'
LINE = re.compile(r"^localhost: job (\S+) \((\S+)\) ([A-Z_]+)(?: \([^)]*\))?(?:, ran (\d+:\d\d:\d\d))?, waited (\d+:\d\d:\d\d)(?:: (.*))?$")


def progress_lines(stdout):
    return [match.groups() for match in map(LINE.match, stdout.splitlines()) if match]


def _seconds(clock):
    hours, minutes, seconds = clock.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds)


def check_progress(proc, result, name):
    assert not result.get("failed") and result["state"] == "COMPLETED" and result["exit_code"] == 0, result
    lines = progress_lines(proc.stdout)
    assert all(line[0] == result["job_id"] and line[1] == name for line in lines), lines
    waiting = [line for line in lines if line[2] in ("PENDING", "RUNNING")]
    assert len(waiting) >= 2, proc.stdout
    assert lines[-1][2] == "COMPLETED" and lines.index(waiting[-1]) < len(lines) - 1, lines
    assert any(line[2] == "RUNNING" and line[3] is not None for line in lines), lines   # the job's own run time
    waited = [_seconds(line[4]) for line in lines]
    assert waited == sorted(waited) and waited[-1] >= 5, lines
    assert any(line[5] and line[5].startswith("tick ") for line in lines), lines         # its output, as it grows
    # the same history is returned, ending with the final state
    assert [p["state"] for p in result["polls"]] == [line[2] for line in lines], (result["polls"], lines)
    assert result["changed"] and result["cmd"]


def test_slurm_job_progress_is_printed_at_each_poll(slurm, play, tmp_path):
    script = write(tmp_path / "prog.sbatch", "#!/bin/bash\n#SBATCH --job-name=prog\n#SBATCH --output=prog-%j.out\n"
                   "for i in 1 2 3 4 5 6; do echo \"tick $i\"; sleep 1; done\n")
    proc, result = play(submit_task(script=script, wait=True, poll_interval=1))
    check_progress(proc, result, "prog")
    assert result["stdout_path"].endswith("prog-%s.out" % result["job_id"])


def test_local_job_progress_is_printed_at_each_poll(play, tmp_path):
    script = write(tmp_path / "prog.sh", "#!/bin/bash\nfor i in 1 2 3 4 5 6; do echo \"tick $i\"; sleep 1; done\n")
    proc, result = play(submit_task(script=script, scheduler="local", wait=True, poll_interval=1))
    check_progress(proc, result, "prog")
    # the same job again with rerun: false: it has ended, nothing is submitted or waited for
    proc, again = play(submit_task(script=script, scheduler="local", wait=True, poll_interval=1, rerun=False))
    assert not again["changed"] and again["job_id"] == result["job_id"] and again["state"] == "COMPLETED", again
    assert [p["state"] for p in again["polls"]] == ["COMPLETED"] and progress_lines(proc.stdout) == []


def test_wait_timeout_fails_the_task_with_the_jobs_state(play, tmp_path):
    scheduler = "local"
    script = write(tmp_path / "nap.sh", "#!/bin/bash\nsleep 30\n")
    proc, result = play(submit_task(script=script, scheduler=scheduler, wait=True, poll_interval=1, wait_timeout=3))
    assert result["failed"], result
    assert result["msg"] == "job %s is still RUNNING after wait_timeout=3 s" % result["job_id"], result
    assert result["changed"] and result["state"] == "RUNNING"
    assert 2 <= len(result["polls"]) <= 5, result["polls"]
    assert len(progress_lines(proc.stdout)) == len(result["polls"]), proc.stdout
    play(submit_task(job_id=result["job_id"], scheduler=scheduler, chdir=str(tmp_path), state="absent"))


def test_a_failing_job_fails_the_task_after_showing_its_progress(play, tmp_path):
    script = write(tmp_path / "bad.sh", "#!/bin/bash\necho tick 1\nsleep 2\necho dying\nexit 3\n")
    proc, result = play(submit_task(script=script, scheduler="local", wait=True, poll_interval=1))
    assert result["failed"] and result["state"] == "FAILED" and result["exit_code"] == 3, result
    assert result["msg"] == "job %s ended FAILED with exit code 3; its output ends: tick 1 | dying" % result["job_id"]
    last = progress_lines(proc.stdout)[-1]
    assert last[2] == "FAILED" and last[5] == "dying", proc.stdout
    assert result["polls"][-1]["state"] == "FAILED"


def test_a_pending_slurm_job_says_the_schedulers_reason_and_expected_start(slurm, play, tmp_path):
    script = write(tmp_path / "later.sbatch", "#!/bin/bash\n#SBATCH --job-name=later\n#SBATCH --begin=now+3600\n"
                   "#SBATCH --output=later-%j.out\ntrue\n")
    proc, result = play(submit_task(script=script, wait=True, poll_interval=1, wait_timeout=3))
    assert result["failed"] and result["state"] == "PENDING", result
    assert result["reason"] == "BeginTime" and re.match(r"^20\d\d-\d\d-\d\dT", result["expected_start"]), result
    pending = [line for line in proc.stdout.splitlines() if line.startswith("localhost: job %s " % result["job_id"])]
    assert pending and all("PENDING (BeginTime, expected start %s)" % result["expected_start"] in line
                           for line in pending), proc.stdout
    play(submit_task(job_id=result["job_id"], scheduler="slurm", chdir=str(tmp_path), state="absent"))
