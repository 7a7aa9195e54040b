"""The whole chain of modak's own jobs under a real Grid Engine, as the optimised_job role runs it: deploy.yml with
a recipe-backed image that is not built yet writes a build job, a staging job and the job, each a JobSpec or the
application's script written by Grid Engine's class, chained by ``after`` (-hold_jid); the build job builds and
pushes the image to a real registry (podman, the tests' busybox base), the staging job checks it is in podman's
storage (pulling it where it is not), and the job then runs in it and COMPLETES. Slurm runs the same chain in slurm/test_build_on_demand.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest
import services
import yaml
from containers.conftest import busybox_base, container_tools, registry  # noqa: F401  pylint: disable=unused-import
from helpers import ROOT

DEPLOY = os.path.join(ROOT, "playbooks", "deploy.yml")
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
SECTION = {"app_type": "ai_training", "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v2"},
           "app_type-ai_training": {"config": {"ai_framework": "pytorch"},
                                    "ai_framework-pytorch": {"version": "2.6.0"}}}
SPEC = {"framework": "pytorch", "version": "2.6.0", "cpu_type": "x86", "cpu_isa": "x86-64-v2"}


def qacct(job_id, env):
    """Grid Engine's accounting record of a finished job (qacct -j), as a dict."""
    out = subprocess.run(["qacct", "-j", str(job_id)], capture_output=True, text=True, env=env, check=True).stdout
    return dict(line.split(None, 1) for line in out.splitlines() if len(line.split(None, 1)) == 2)


def when(text):
    return time.mktime(time.strptime(text.strip(), "%a %b %d %H:%M:%S %Y"))


def ran(folder, name, env):
    """The one job named ``name`` that wrote its output (Grid Engine's own <name>.o<id>) in ``folder``."""
    [path] = folder.glob("%s.o*" % name)
    record = qacct(path.name.rsplit(".o", 1)[1], env)
    return dict(record, output=path.read_text(), start=when(record["start_time"]), end=when(record["end_time"]))


@pytest.fixture
def insecure(registry):  # noqa: F811
    """The site's word that its registry speaks plain HTTP (registries.conf), as the build's push is told with
    tls_verify: false; the staging job's podman pull reads it."""
    path = "/etc/containers/registries.conf.d/modak-test-%s.conf" % registry["host"].replace(":", "-")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('[[registry]]\nlocation = "%s"\ninsecure = true\n' % registry["host"])
    yield
    os.unlink(path)


def test_build_job_then_staging_job_then_the_job_in_its_image(gridengine, registry, busybox_base, insecure,  # noqa: F811
                                                              tmp_path):
    services.podman_settings()
    name = "gechain%d" % (int(time.time() * 1000) % 100000000)
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump({"images": [{"name": name, "recipe": SPEC}]}))
    work = tmp_path / "work"
    doc = {"job": {"job_options": {"job_name": name, "wall_time_limit": "00:10:00"},
                   "application": {"executable": "/bin/sh", "arguments": ["-c", "echo ran; cat /var/log/modak-standin.log"]},
                   # Grid Engine gives a job a short PATH: the site's setup (run by every job modak writes, the build
                   # job too) adds the system folders, where podman's network plugins find iptables
                   "target": {"job_scheduler_type": "gridengine", "container_engine": "podman",
                              "work_dir": str(work), "setup": 'export PATH="$PATH:/usr/sbin:/sbin"'},
                   "optimisation": SECTION}}
    dsl_file = tmp_path / "job.yaml"
    dsl_file.write_text(yaml.safe_dump(doc))
    prefix = "docker://%s/modak-%s" % (registry["host"], name)
    extra = {"dsl_file": str(dsl_file), "optimised_job_output_dir": str(tmp_path / "out"),
             "optimised_job_catalog": str(catalog), "optimised_job_build_prefix": prefix,
             "optimised_job_build_base_image": busybox_base, "optimised_job_build_where": "gridengine",
             "optimised_job_build_tls_verify": False, "optimised_job_image_stage": True,
             "optimised_job_wait": True, "optimised_job_wait_timeout": 600, "optimised_job_fetch": False,
             "optimised_job_build_poll": 1, "optimised_job_poll_interval": 1,
             "optimised_job_build_job_cpus": 1, "optimised_job_build_job_walltime": "00:10:00"}
    env = dict(gridengine, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0")
    image = None
    try:
        proc = subprocess.run([PLAYBOOK, DEPLOY, "-e", json.dumps(extra)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=900, check=False)
        stage_script = (work / ("%s.sge.stage.sh" % name)).read_text()
        image = re.search(r"^IMAGE=(\S+)", stage_script, re.M).group(1).strip("'")
        assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
        build = ran(work / "modak-build", "modak-build", gridengine)
        stage = ran(work, "modak-stage", gridengine)
        job = ran(work, name, gridengine)
        assert [r["exit_status"].strip() for r in (build, stage, job)] == ["0", "0", "0"]
        # each held (-hold_jid) until the one before it had ended
        assert build["end"] <= stage["start"] and stage["end"] <= job["start"], (build, stage, job)
        # one host: the build left the image in podman's storage, so the staging job finds it there (on a cluster
        # it pulls it from the registry, through the site's registries.conf)
        assert "modak: image present: %s" % image in stage["output"], stage["output"]
        # the job ran in the image the build job made: the recipe's steps left their log there
        assert "ran\napt-get update" in job["output"], job["output"]
        build_job = (work / "modak-build").glob("modak-build-*.sge")
        assert 'eval \'export PATH="$PATH:/usr/sbin:/sbin"\'' in next(build_job).read_text()
    finally:
        if image:
            subprocess.run(["podman", "rmi", "-f", image], capture_output=True, check=False)
