"""The BatchJob's delete removes only what its create made (recorded in modak-created.json as it made it): the
create and delete playbooks run by the real ansible-playbook with the local scheduler, around a job directory that
exists before (a job named ``data`` next to a user's ``data/thesis.tex``), one that does not, and one where the
application leaves a file of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLAYBOOKS = os.path.join(ROOT, "tosca", "library", "modak", "playbooks")


def _play(name, variables):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_SHOW_CUSTOM_STATS="1")
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           os.path.join(PLAYBOOKS, name), "-e", json.dumps(dict(variables, ansible_python_interpreter=sys.executable))], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # the default callback ends with 'CUSTOM STATS:' and one 'RUN: {json}' line (what xOpera reads as attributes)
    found = [line.split("RUN:", 1)[1] for line in proc.stdout.splitlines() if line.strip().startswith("RUN:")]
    return json.loads(found[-1]) if found else {}


def _deploy_and_undeploy(tmp_path, name, body=""):
    script = tmp_path / ("%s.sh" % name)
    script.write_text("#!/bin/bash\n# modak: local run of job %s\necho done\n%s" % (name, body))
    work = tmp_path / "work"
    stats = _play("submit.yml", {"job_script": str(script), "scheduler": "local", "work_dir": str(work),
                                 "submit": "always", "wait": True, "wait_timeout": 60, "poll_interval": 1,
                                 "fail_on_job_error": True, "extra_args": [], "availability": "available",
                                 "build": False})
    assert stats["job_state"] == "COMPLETED" and stats["job_dir"] == str(work / name), stats
    _play("cancel.yml", {"job_id": stats["job_id"], "job_state": stats["job_state"], "scheduler": "local",
                         "job_dir": stats["job_dir"], "created_dir": stats.get("created_dir", "")})
    return work / name, stats


def test_delete_keeps_a_directory_that_existed_before_create(tmp_path):
    thesis = tmp_path / "work" / "data" / "thesis.tex"
    thesis.parent.mkdir(parents=True)
    thesis.write_text("years of work\n")
    job_dir, stats = _deploy_and_undeploy(tmp_path, "data")
    assert stats["created_dir"] == ""
    assert thesis.read_text() == "years of work\n"
    assert sorted(os.listdir(str(job_dir))) != [], "the user's directory is still there"


def test_delete_removes_the_directory_create_made(tmp_path):
    job_dir, stats = _deploy_and_undeploy(tmp_path, "fresh")
    assert stats["created_dir"] == str(job_dir)
    assert not job_dir.exists()


def test_delete_keeps_what_the_application_wrote_in_the_directory_create_made(tmp_path):
    """What delete removes is what create recorded (the script, batch_job's files, the ended job's output): the
    application's own file stays, and so does the directory."""
    job_dir, stats = _deploy_and_undeploy(tmp_path, "train", body="echo weights >model.pt\n")
    assert stats["created_dir"] == str(job_dir)
    assert sorted(os.listdir(str(job_dir))) == ["model.pt"]
