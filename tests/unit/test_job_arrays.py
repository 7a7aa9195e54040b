"""A job array's state is the whole array's: active while one element is, COMPLETED only when every element is
(before, Slurm answered with one element's line: the wait of a two-element benchmark array ended when the first
element had, and sacct's element ids <id>_<index> were not found)."""

from __future__ import annotations

from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.slurm import Slurm

SHOW = ("JobId=%s ArrayJobId=41 ArrayTaskId=%s JobName=modak-bench JobState=%s ExitCode=%s RunTime=00:00:03 "
        "StdOut=/w/modak-bench-41_%s.out\n")
SACCT = ["sacct", "-j", "41", "-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"]


def show(*elements):
    return "".join(SHOW % (41 + i, i, state, code, i) for i, (state, code) in enumerate(elements))


def status(out, accounting=None):
    answers = [(["scontrol", "show", "job", "-o", "41"], out)]
    if accounting is not None:
        answers.append((SACCT, (0, accounting, "")))
    return Slurm(FakeRunner(answers)).status("41")


def test_an_array_with_an_element_running_is_running():
    found = status((0, show(("RUNNING", "0:0"), ("COMPLETED", "0:0")), ""))
    assert (found.state, found.active) == ("RUNNING", True)


def test_an_array_with_a_pending_element_is_pending():
    found = status((0, show(("PENDING", "0:0"), ("COMPLETED", "0:0")), ""))
    assert (found.state, found.active) == ("PENDING", True)


def test_an_array_ended_well_only_when_every_element_did():
    good = "41_0|modak-bench|COMPLETED|0:0|00:00:03|x\n41_1|modak-bench|COMPLETED|0:0|00:00:04|x\n"
    assert status((0, show(("COMPLETED", "0:0"), ("COMPLETED", "0:0")), ""), good).state == "COMPLETED"
    failed = status((0, show(("FAILED", "1:0"), ("COMPLETED", "0:0")), ""))
    assert (failed.state, failed.exit_code, failed.stdout_path) == ("FAILED", 1, "/w/modak-bench-41_0.out")


def test_an_array_that_left_the_controller_is_read_element_by_element_from_accounting():
    gone = (1, "", "slurm_load_jobs error: Invalid job id specified\n")
    lines = "41_0|modak-bench|COMPLETED|0:0|00:00:03|x\n41_1|modak-bench|FAILED|2:0|00:00:04|x\n"
    found = status(gone, lines)
    assert (found.state, found.exit_code, found.active) == ("FAILED", 2, False)


def test_an_element_the_controller_forgot_is_read_from_accounting():
    """scontrol lists only the elements it still holds (MinJobAge): one that failed early is in sacct alone."""
    lines = "41_0|modak-bench|FAILED|1:0|00:00:01|x\n41_1|modak-bench|COMPLETED|0:0|00:00:04|x\n"
    found = status((0, SHOW % (42, 1, "COMPLETED", "0:0", 1), ""), lines)
    assert (found.state, found.exit_code) == ("FAILED", 1)


def test_one_element_is_found_in_accounting_by_its_own_id():
    gone = (1, "", "slurm_load_jobs error: Invalid job id specified\n")
    answers = [(["scontrol", "show", "job", "-o", "41_1"], gone),
               (["sacct", "-j", "41_1", "-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"],
                (0, "41_1|modak-bench|COMPLETED|0:0|00:00:04|x\n", ""))]
    assert Slurm(FakeRunner(answers)).status("41_1").state == "COMPLETED"
