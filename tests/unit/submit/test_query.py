"""state=query: the job's state and the last lines of its output, from the scheduler's answers; nothing else runs."""

from __future__ import annotations

import os
import time

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import JobFailed, Request, run

SHOW = ["scontrol", "show", "job", "-o", "42"]


def _show(state, out, run_time="00:01:23", exit_code="0:0", user=None):
    user = user or "me(%d)" % os.geteuid()
    return (0, "JobId=42 JobName=train UserId=%s JobState=%s RunTime=%s ExitCode=%s StdOut=%s StdErr=%s\n"
            % (user, state, run_time, exit_code, out, out), "")


def _query(tmp_path, answer, **fields):
    runner = FakeRunner([(SHOW, answer)])
    request = dict(job_id="42", scheduler="slurm", state="query", chdir=str(tmp_path))
    request.update(fields)
    return run(Request(**request), runner), runner


def test_query_reports_state_run_time_and_the_last_output_lines(tmp_path):
    out = tmp_path / "train-42.out"
    out.write_text("loading\nepoch 1/3\nepoch 2/3\n\nepoch 3/3 loss 0.4\n")
    result, runner = _query(tmp_path, _show("RUNNING", out))
    assert result["state"] == "RUNNING" and result["active"] is True and result["elapsed"] == 83
    assert result["stdout_tail"] == ["epoch 1/3", "epoch 2/3", "epoch 3/3 loss 0.4"]
    assert result["changed"] is False and result["cmd"] == [] and result["msg"] == "job 42 is RUNNING"
    assert [tuple(a) for a in runner.history] == [tuple(SHOW)]          # one query, no submission, no cancel


def test_query_of_a_pending_job_without_output_file_has_an_empty_tail(tmp_path):
    result, _runner = _query(tmp_path, _show("PENDING", tmp_path / "not-yet.out", run_time="00:00:00"))
    assert result["state"] == "PENDING" and result["active"] is True and result["stdout_tail"] == []


def test_query_of_a_completed_job_is_inactive_and_succeeds(tmp_path):
    result, _runner = _query(tmp_path, _show("COMPLETED", tmp_path / "x.out"))
    assert result["active"] is False and result["exit_code"] == 0 and not result.get("failed")


def test_query_of_a_failed_job_fails_with_its_exit_code(tmp_path):
    with pytest.raises(JobFailed) as info:
        _query(tmp_path, _show("FAILED", tmp_path / "x.out", exit_code="3:0"))
    assert str(info.value) == "job 42 ended FAILED with exit code 3"
    assert info.value.result["state"] == "FAILED" and info.value.result["exit_code"] == 3


def test_query_of_a_failed_job_only_reports_without_fail_on_job_error(tmp_path):
    result, _runner = _query(tmp_path, _show("FAILED", tmp_path / "x.out", exit_code="3:0"), fail_on_job_error=False)
    assert result["state"] == "FAILED" and result["exit_code"] == 3 and result["active"] is False


def test_query_needs_a_job_id(tmp_path):
    with pytest.raises(SubmitError, match="job_id is required with state=query"):
        run(Request(scheduler="slurm", state="query", chdir=str(tmp_path)), FakeRunner([]))


def test_query_of_a_local_job_reads_its_output(tmp_path):
    """A real local job (bash in the background): query follows it without a scheduler."""
    script = tmp_path / "count.sh"
    script.write_text("#!/bin/bash\necho one\necho two\n")
    submitted = run(Request(script=str(script), scheduler="local", wait=False))
    for _poll in range(500):     # the job ends within milliseconds; no poll floor between these queries
        result = run(Request(script=str(script), scheduler="local", state="query", job_id=submitted["job_id"]))
        if not result["active"]:
            break
        time.sleep(0.01)
    assert result["state"] == "COMPLETED" and result["stdout_tail"] == ["one", "two"] and not result["changed"]


def test_a_poll_goes_on_when_the_job_script_is_gone(tmp_path):
    """The script only names the job's files; a job whose script was removed while it runs is still followed."""
    result, _runner = _query(tmp_path, _show("RUNNING", tmp_path / "x.out"), script=str(tmp_path / "removed.sbatch"))
    assert result["state"] == "RUNNING" and result["chdir"] == str(tmp_path)


def test_a_submission_still_refuses_a_missing_script(tmp_path):
    with pytest.raises(SubmitError, match="cannot read the job script"):
        run(Request(script=str(tmp_path / "removed.sbatch"), scheduler="slurm", chdir=str(tmp_path)), FakeRunner([]))


def test_a_pending_job_says_the_schedulers_reason_and_expected_start(tmp_path):
    answer = (0, "JobId=42 JobName=train JobState=PENDING Reason=Resources RunTime=00:00:00 ExitCode=0:0 "
                 "StartTime=2026-11-25T15:00:00 StdOut=%s StdErr=%s\n" % (tmp_path / "o", tmp_path / "o"), "")
    result, _runner = _query(tmp_path, answer)
    assert result["reason"] == "Resources" and result["expected_start"] == "2026-11-25T15:00:00"


def test_a_running_job_has_no_reason_and_no_expected_start(tmp_path):
    answer = (0, "JobId=42 JobName=train JobState=RUNNING Reason=None RunTime=00:00:05 ExitCode=0:0 "
                 "StartTime=2026-11-25T14:00:00 StdOut=%s StdErr=%s\n" % (tmp_path / "o", tmp_path / "o"), "")
    result, _runner = _query(tmp_path, answer)
    assert result["reason"] is None and result["expected_start"] is None


def test_a_failed_job_says_its_exit_code_reason_and_last_error_lines(tmp_path):
    err = tmp_path / "train-42.err"
    err.write_text("starting\nmodak: no image at /img/x: stage it before submitting\n")
    answer = (0, "JobId=42 JobName=train UserId=me(%d) JobState=FAILED Reason=NonZeroExitCode RunTime=00:00:01 "
                 "ExitCode=1:0 StdOut=%s StdErr=%s\n" % (os.geteuid(), tmp_path / "train-42.out", err), "")
    with pytest.raises(JobFailed) as info:
        _query(tmp_path, answer)
    assert str(info.value) == ("job 42 ended FAILED with exit code 1 (reason: NonZeroExitCode); its output ends: "
                               "starting | modak: no image at /img/x: stage it before submitting")


def test_as_root_the_output_of_another_users_job_is_read_only_when_it_is_theirs(tmp_path):
    """Hardening, round five, item 9: root's query (batch_job, modak logs, the progress line) printed the last lines
    of whatever file the scheduler named as the job's output: StdOut=/etc/shadow for another user's job."""
    if os.geteuid() != 0:
        pytest.skip("only root reads what the job's user may not")
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000::::::\n")
    os.chmod(str(secret), 0o600)
    result, _runner = _query(tmp_path, _show("RUNNING", secret, user="nobody(65534)"))
    assert result["stdout_tail"] == [] and result["stdout_path"] is None and result["stderr_path"] is None
    os.chown(str(secret), 65534, -1)             # the job's user's own file: read
    result, _runner = _query(tmp_path, _show("RUNNING", secret, user="nobody(65534)"))
    assert result["stdout_tail"] == ["root:$6$secret:19000::::::"]


def test_a_comment_that_names_another_user_is_not_taken_for_the_jobs_user(tmp_path):
    """A review of the fix above: scontrol prints Comment after UserId, and the job's user writes it
    (sbatch --comment="x UserId=root(0)"): the last occurrence won, and root printed its own file for her job."""
    if os.geteuid() != 0:
        pytest.skip("only root reads what the job's user may not")
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000::::::\n")
    code, text, err = _show("RUNNING", secret, user="nobody(65534)")
    text = text.rstrip("\n") + " Comment=x UserId=root(0)\n"
    result, _runner = _query(tmp_path, (code, text, err))
    assert result["stdout_tail"] == [] and result["stdout_path"] is None


@pytest.mark.parametrize("name", ["x UserId=root(0)", "x UserId=bogus"])
def test_a_job_name_that_names_a_user_leaves_root_nothing_to_read(name, tmp_path):
    """A second review: scontrol prints JobName (the job's user's text, spaces allowed) before UserId; with the
    first occurrence winning, `-J "x UserId=root(0)"` made root print its own file for her job, and a name that
    left the owner unreadable kept the file too. A field named twice is ambiguous, and an unknown owner leaves
    root nothing to read."""
    if os.geteuid() != 0:
        pytest.skip("only root reads what the job's user may not")
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000::::::\n")
    code, text, err = _show("RUNNING", secret, user="nobody(65534)")
    result, _runner = _query(tmp_path, (code, text.replace("JobName=train", "JobName=" + name), err))
    assert result["stdout_tail"] == [] and result["stdout_path"] is None
