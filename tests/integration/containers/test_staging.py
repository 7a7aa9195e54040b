"""Images staged before submitting (target.image_fetch: staged, the default): playbooks/deploy.yml pulls the
DSL's registry image once on the login node (here localhost) with podman, then the job runs in it; a job whose
image was not staged stops at once and the play says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT

BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def pushed(busybox_base, registry):
    """The tiny base image in the test registry; podman may pull it over plain HTTP from that one port."""
    ref = "%s/modak-stage/bb:1" % registry["host"]
    conf = "/etc/containers/registries.conf.d/modak-test-%s.conf" % registry["host"].replace(":", "-")
    os.makedirs(os.path.dirname(conf), exist_ok=True)
    with open(conf, "w", encoding="utf-8") as handle:
        handle.write('[[registry]]\nlocation = "%s"\ninsecure = true\n' % registry["host"])
    subprocess.run(["podman", "push", "--quiet", "--tls-verify=false", busybox_base, "docker://" + ref], check=True,
                   capture_output=True, timeout=300)
    yield "docker://" + ref
    os.unlink(conf)


def _forget(ref):
    subprocess.run(["podman", "rmi", "--force", ref[len("docker://"):]], capture_output=True, check=False, timeout=120)


def deploy(tmp_path, uri, extra=None):
    dsl = {"job": {"job_options": {"job_name": "staged", "standard_output_file": "staged.out"},
                   "application": {"executable": "/bin/echo", "arguments": "hello from the staged image",
                                   "container_runtime": uri},
                   "target": {"job_scheduler_type": "local", "container_engine": "podman"}}}
    (tmp_path / "staged.yaml").write_text(yaml.safe_dump(dsl))
    variables = dict({"dsl_file": "staged.yaml", "optimised_job_work_dir": str(tmp_path / "work"),
                      "optimised_job_poll_interval": 1, "optimised_job_rerun": True,
                      "ansible_python_interpreter": sys.executable}, **(extra or {}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="False", PWD=str(tmp_path))
    return subprocess.run([os.path.join(BIN, "ansible-playbook"), os.path.join(ROOT, "playbooks", "deploy.yml"),
                           "-e", json.dumps(variables)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          check=False, timeout=900)


def test_deploy_stages_the_image_then_the_job_runs_in_it(pushed, tmp_path):
    _forget(pushed)
    done = deploy(tmp_path, pushed)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Stage the image on this host" in done.stdout and "COMPLETED" in done.stdout
    assert "hello from the staged image" in (tmp_path / "work" / "staged.out").read_text()
    script = (tmp_path / "work" / "staged.sh").read_text()
    assert "podman pull" not in script and 'podman image exists "$IMAGE"' in script
    again = deploy(tmp_path, pushed)                # staged already: the staging task changes nothing
    assert again.returncode == 0 and "modak: image present" in again.stdout, again.stdout[-3000:]


def test_a_job_whose_image_is_not_staged_stops_and_says_why(pushed, tmp_path):
    _forget(pushed)
    done = deploy(tmp_path, pushed, {"optimised_job_image_stage": False})
    assert done.returncode != 0
    assert "modak: no image at" in done.stdout and "target.image_fetch: job" in done.stdout, done.stdout[-4000:]
