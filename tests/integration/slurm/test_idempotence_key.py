"""The Slurm idempotence key (--comment=modak:<sha256>) cannot be forged to take over another job."""

from __future__ import annotations

import json
import subprocess

from ansible_collections.sodalite.modak.plugins.module_utils import job_control as job

from .conftest import queued_from


def task(**args):
    return ("- name: Batch job\n  sodalite.modak.batch_job: %s\n  register: r\n  ignore_errors: true\n"
            % json.dumps(args))


def _script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_a_job_with_a_forged_comment_does_not_take_over_the_submission(slurm, play, tmp_path):
    victim = _script(tmp_path / "victim" / "train.sbatch",
                     "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --output=train-%j.out\necho real\n")
    key = job.Job(job.Request(script=victim, scheduler="slurm")).digest
    forged = _script(tmp_path / "forger" / "train.sbatch", "#!/bin/bash\n#SBATCH --job-name=train\necho forged\n")
    proc = subprocess.run(["sbatch", "--parsable", "--hold", "--comment=modak:%s" % key, forged],
                          cwd=str(tmp_path / "forger"), capture_output=True, text=True, check=True)
    forged_id = proc.stdout.strip().split(";")[0]
    try:
        _proc, r = play(task(script=victim, wait=True, poll_interval=1, wait_timeout=120))
        assert r["changed"] and r["job_id"] != forged_id, r
        assert r["state"] == "COMPLETED", r
    finally:
        subprocess.run(["scancel", forged_id], check=False)


def test_a_script_that_sets_the_reserved_comment_prefix_is_refused(slurm, play, tmp_path):
    assert queued_from(tmp_path) == []
    forged = _script(tmp_path / "f.sbatch", "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --comment=modak:%s\n"
                     "true\n" % ("0" * 64))
    _proc, r = play(task(script=forged))
    assert r["failed"] and "reserved" in r["msg"], r
    plain = _script(tmp_path / "g.sbatch", "#!/bin/bash\n#SBATCH --job-name=train\ntrue\n")
    _proc, r = play(task(script=plain, extra_args=["--comment=MODAK:x"]))
    assert r["failed"] and "reserved" in r["msg"], r
    assert queued_from(tmp_path) == []
