"""The modak command follows a real Slurm job: ``modak submit`` prints its id, ``modak status --wait`` follows it to
COMPLETED (a line per poll), ``modak logs`` prints its output: the commands of docs/cli.md, as written there."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from helpers import ROOT

from .conftest import queued_from
from .test_batch_job_slurm import write

MODAK = os.path.join(ROOT, "bin", "modak")
# 'job 42 (hello) RUNNING, ran 0:00:03, waited 0:00:05: tick 3' (standard error, one line per poll)
POLL = re.compile(r"^job (\d+) \(hello\) ([A-Z_]+)(?:, ran \d+:\d\d:\d\d)?, waited \d+:\d\d:\d\d(?:: (.*))?$")


def test_modak_submit_then_status_wait_then_logs_to_completed(slurm, tmp_path):
    """docs/cli.md's three commands, run in a shell as written, from the directory that holds jobs/hello.sbatch."""
    (tmp_path / "jobs").mkdir()
    write(tmp_path / "jobs" / "hello.sbatch", "#!/bin/bash\n#SBATCH --job-name=hello\n#SBATCH --output=hello-%j.out\n"
          "for i in 1 2 3 4; do echo \"tick $i\"; sleep 1; done\necho hello from modak\n")
    env = dict(os.environ, LC_ALL="C", MODAK_PYTHON=sys.executable)
    # the three commands of docs/cli.md, run in one shell as written: bin/modak submit, status --wait, logs
    commands = ('set -e\nid=$(bin/modak submit jobs/hello.sbatch)\necho "id=$id"\n'
                'bin/modak status --wait "$id"\nbin/modak logs "$id"\n')
    os.symlink(os.path.join(ROOT, "bin"), str(tmp_path / "bin"))
    done = subprocess.run(["bash", "-c", commands], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, (done.stdout, done.stderr)
    out = done.stdout.splitlines()
    job_id = out[0].split("=", 1)[1]
    assert job_id.isdigit(), done.stdout
    assert out[1] == "COMPLETED", done.stdout                                  # status --wait: the final state
    assert out[2:] == ["tick 1", "tick 2", "tick 3", "tick 4", "hello from modak"], done.stdout   # logs
    polls = [POLL.match(line).groups() for line in done.stderr.splitlines() if POLL.match(line)]
    assert polls and all(poll[0] == job_id for poll in polls), done.stderr
    assert polls[-1][1] == "COMPLETED" and any(poll[1] in ("PENDING", "RUNNING") for poll in polls), done.stderr
    # the job ran from the directory modak submit ran in (as sbatch does), and the ledger there knows it
    assert (tmp_path / ("hello-%s.out" % job_id)).read_text().endswith("hello from modak\n")
    assert job_id in (tmp_path / ".modak" / "jobs.json").read_text()
    assert queued_from(tmp_path) == []

    # status of the ended job, in JSON, found through the ledger without --scheduler: batch_job's result
    status = subprocess.run([MODAK, "status", "--format", "json", job_id], cwd=str(tmp_path), env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert status.returncode == 0, status.stderr
    assert '"state": "COMPLETED"' in status.stdout and '"scheduler": "slurm"' in status.stdout, status.stdout
    # the same job, ended: submit runs it again (batch_job's rerun), under a new id; cancel then stops it
    again = subprocess.run([MODAK, "submit", "--scheduler", "slurm", "jobs/hello.sbatch"], cwd=str(tmp_path),
                           env=env, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0 and again.stdout.strip().isdigit() and again.stdout.strip() != job_id, again
    cancel = subprocess.run([MODAK, "cancel", "--wait", "--poll-interval", "1", again.stdout.strip()],
                            cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120, check=False)
    assert cancel.returncode == 0, (cancel.stdout, cancel.stderr)
    assert re.search(r"cancelled \((CANCELLED|COMPLETED)\)|has already ended", cancel.stdout), cancel.stdout
    assert queued_from(tmp_path) == []
