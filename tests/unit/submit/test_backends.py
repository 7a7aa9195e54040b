"""Every scheduler's submission through the Job orchestration, data-driven: exact argv -> rc, out, err."""

from __future__ import annotations

import os

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import digest
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run

SLURM = "#!/bin/bash\n#SBATCH --job-name=t\nsrun ./a\n"
TORQUE = "#!/bin/bash\n#PBS -N t\n#PBS -l nodes=1:ppn=1\n./a\n"
PBSPRO = "#!/bin/bash\n#PBS -N t\n#PBS -l select=1:ncpus=1\n./a\n"
SQUEUE = ["squeue", "--me", "--noheader", "--name=t",
          "--states=PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED,RESIZING", "--format=%i|%k|%T"]
SACCT = ["-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"]
QSTAT_RUNNING = "Job Id: 7.srv\n    Job_Name = t\n    job_state = R\n    resources_used.walltime = 00:00:03\n"
QSTAT_FAILED = ("Job Id: 7.srv\n    Job_Name = t\n    job_state = F\n    Exit_status = 3\n"
                "    Output_Path = login:/w/t.o7\n    Join_Path = oe\n")


def _ok(out):
    return (0, out, "")


CASES = [
    # name, script text (or None), request fields, [(argv, (rc, out, err))], expected result fields
    ("slurm submits with its content hash as comment", SLURM, {}, [
        (SQUEUE, _ok("")),
        (["sbatch", "--parsable", "--comment=modak:" + digest(SLURM), "{script}"], _ok("42\n")),
        (["scontrol", "show", "job", "-o", "42"], _ok("JobId=42 JobName=t JobState=PENDING ExitCode=0:0\n")),
    ], {"changed": True, "job_id": "42", "state": "PENDING", "job_name": "t", "scheduler": "slurm"}),
    ("slurm finds the same job queued and does not submit it again", SLURM, {}, [
        (SQUEUE, _ok("41|modak:%s|RUNNING\n" % digest(SLURM))),
        (["scontrol", "show", "job", "-o", "41"],
         _ok("JobId=41 JobName=t UserId=u({uid}) Command={script} JobState=RUNNING RunTime=00:00:09\n")),
    ], {"changed": False, "job_id": "41", "state": "RUNNING", "elapsed": 9}),
    ("slurm reads an ended job from accounting", None, {"job_id": "7", "scheduler": "slurm", "state": "absent"}, [
        (["scontrol", "show", "job", "-o", "7"], (1, "", "slurm_load_jobs error: Invalid job id specified\n")),
        (["sacct", "-j", "7"] + SACCT, _ok("7|t|FAILED|3:0|00:00:05|2026-01-01T00:00:05\n")),
    ], {"changed": False, "state": "FAILED", "exit_code": 3, "elapsed": 5}),
    ("slurm cancels a running job", None, {"job_id": "8", "scheduler": "slurm", "state": "absent"}, [
        (["scontrol", "show", "job", "-o", "8"], _ok("JobId=8 JobName=t JobState=RUNNING\n")),
        (["scancel", "8"], _ok("")),
    ], {"changed": True, "cmd": ["scancel", "8"]}),
    ("torque submits with qsub and reads qstat -f", TORQUE, {}, [
        (["qsub", "{script}"], _ok("7.srv\n")),
        (["qstat", "-f", "7.srv"], _ok(QSTAT_RUNNING)),
    ], {"changed": True, "job_id": "7.srv", "state": "RUNNING", "elapsed": 3, "scheduler": "torque"}),
    ("pbspro reads finished jobs with qstat -x", None, {"job_id": "7.srv", "scheduler": "pbspro", "state": "absent"}, [
        (["qstat", "-x", "-f", "7.srv"], _ok(QSTAT_FAILED)),
    ], {"changed": False, "state": "FAILED", "exit_code": 3, "stdout_path": "/w/t.o7", "stderr_path": "/w/t.o7"}),
    ("the scheduler is read from the script (PBS Pro: select=)", PBSPRO, {"scheduler": None}, [
        (["qsub", "{script}"], _ok("9.srv\n")),
        (["qstat", "-x", "-f", "9.srv"], _ok(QSTAT_RUNNING.replace("7.srv", "9.srv"))),
    ], {"scheduler": "pbspro", "job_id": "9.srv"}),
]


def _table(rows, script):
    """The rows with {script} (the script's path) and {uid} (this user's id) filled in, argv and output."""
    def fill(text):
        return text.replace("{script}", script).replace("{uid}", str(os.getuid()))
    return [([fill(a) for a in argv], (answer[0], fill(answer[1]), answer[2])) for argv, answer in rows]


@pytest.mark.parametrize("name,text,fields,rows,want", CASES, ids=[c[0] for c in CASES])
def test_backend(name, text, fields, rows, want, tmp_path):
    script = None
    if text is not None:
        script = str(tmp_path / "t.sh")
        with open(script, "w") as handle:
            handle.write(text)
    request = dict({"script": script, "scheduler": fields.get("scheduler", "slurm" if text == SLURM else None),
                    "chdir": str(tmp_path)}, **fields)
    if request["scheduler"] is None and text is None:
        request.pop("scheduler")
    runner = FakeRunner(_table(rows, script or ""))
    result = run(Request(**request), runner)
    assert dict((key, result[key]) for key in want) == want
    assert all(tuple(argv) in set(tuple(a) for a in runner.history) for argv, _answer in _table(rows, script or ""))


def test_a_failing_command_is_a_submit_error_with_its_words(tmp_path):
    script = tmp_path / "t.sh"
    script.write_text(SLURM)
    runner = FakeRunner([(SQUEUE, _ok("")), (["sbatch", "--parsable", "--comment=modak:" + digest(SLURM), str(script)],
                                             (1, "", "sbatch: error: Invalid partition name specified\n"))])
    with pytest.raises(SubmitError) as info:
        run(Request(script=str(script), scheduler="slurm"), runner)
    assert "Invalid partition name specified" in str(info.value) and info.value.rc == 1
