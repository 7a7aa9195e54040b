"""Build on demand: deploy.yml with a recipe-backed image that is not built yet builds it (here, or as a
Slurm build job the job depends on with afterok), pushes it to a real registry, then submits the job to the
real Slurm; a failed build stops the deploy with the build log. Builds are real podman builds on the tests'
busybox base with logging stand-ins."""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request

import pytest
import yaml
from containers.conftest import busybox_base, container_tools, registry  # noqa: F401  pylint: disable=unused-import
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher, recipe_images
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog

SECTION = {"app_type": "ai_training", "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v2"},
           "app_type-ai_training": {"config": {"ai_framework": "pytorch"},
                                    "ai_framework-pytorch": {"version": "2.6.0"}}}
# the catalog entry's recipe specification: what SECTION asks for
SPEC = {"framework": "pytorch", "version": "2.6.0", "cpu_type": "x86", "cpu_isa": "x86-64-v2"}
DEPLOY = os.path.join(ROOT, "playbooks", "deploy.yml")


def scontrol(job_id):
    out = subprocess.run(["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True,
                         check=True).stdout
    return dict(re.findall(r"(\w+)=(\S*)", out))


@pytest.fixture
def setup(tmp_path, registry, busybox_base):  # noqa: F811
    """A user catalog with one recipe-backed entry, its DSL, and the deploy's variables."""
    name = "ondemand%d" % (int(time.time() * 1000) % 100000000)
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump({"images": [{"name": name, "recipe": SPEC}]}))
    doc = {"job": {"job_options": {"job_name": name}, "application": {"executable": "/bin/true"},
                   "target": {"job_scheduler_type": "slurm", "work_dir": str(tmp_path / "work")},
                   "optimisation": SECTION}}
    dsl_file = tmp_path / "job.yaml"
    dsl_file.write_text(yaml.safe_dump(doc))
    prefix = "docker://%s/modak-%s" % (registry["host"], name)
    extra = {"dsl_file": str(dsl_file), "optimised_job_output_dir": str(tmp_path / "out"),
             "optimised_job_catalog": str(catalog), "optimised_job_build_prefix": prefix,
             "optimised_job_build_base_image": busybox_base, "optimised_job_wait": False,
             "optimised_job_fetch": False, "optimised_job_build_poll": 1, "optimised_job_poll_interval": 0.3,
             "optimised_job_build_job_cpus": 1, "optimised_job_build_job_walltime": "00:10:00",
             # the DSL's engine is Apptainer, which cannot be installed here: these tests build, they stage in
             # test_a_staging_job_runs_between_the_build_job_and_the_job
             "optimised_job_image_stage": False}
    image = ImageCatalog.from_file(str(catalog), build_prefix=prefix, base_image=busybox_base).images[0]
    choice = matcher.choose(dsl.parse(doc), ImageCatalog([image]))
    assert choice.uri == image.uri and image.uri.startswith(prefix + "/")
    yield {"extra": extra, "uri": image.uri, "choice": choice, "tmp": tmp_path, "name": name}
    ids = subprocess.run(["squeue", "-h", "-o", "%i", "-n", name], capture_output=True, text=True,
                         check=False).stdout.split()
    if ids:
        subprocess.run(["scancel"] + ids, check=False)


def manifest_exists(uri):
    host, rest = uri[len("docker://"):].split("/", 1)
    repo, tag = rest.rsplit(":", 1)
    req = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (host, repo, tag), method="HEAD", headers={
        "Accept": "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status == 200
    except OSError:
        return False


def build_job_of(build_dir):
    """The Slurm build job that runs in ``build_dir``."""
    out = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True, text=True, check=True).stdout
    jobs = [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines()]
    found = [j for j in jobs if j.get("JobName") == "modak-build" and j.get("WorkDir") == str(build_dir)]
    assert len(found) == 1, out
    return found[0]["JobId"]


def job_id_of(stdout):
    match = re.search(r"'job_id': '?(\d+)", stdout) or re.search(r'"job_id": "?(\d+)', stdout)
    assert match, stdout[-3000:]
    return match.group(1)


def test_to_build_image_is_built_pushed_then_the_job_submitted(slurm, play, setup):
    assert recipe_images.availability(setup["choice"])[0] == "to-build"
    # the job finds no staged image and ends at once: this test reads its submission, and a status read after it
    # has ended must not fail the deploy (it did when the job was quicker than the query)
    setup["extra"]["optimised_job_fail_on_job_error"] = False
    proc = play(None, extra_vars=setup["extra"], playbook=DEPLOY, timeout=600)[0]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Build the image from its recipe" in proc.stdout and "Push the image" in proc.stdout
    assert manifest_exists(setup["uri"]), setup["uri"]
    assert recipe_images.availability(setup["choice"])[0] == "built"
    job = scontrol(job_id_of(proc.stdout))
    assert job["JobName"] == setup["name"]
    # a second deploy finds the image built: no build step runs
    again = play(None, extra_vars=dict(setup["extra"], optimised_job_rerun=True, optimised_job_force=True),
                 playbook=DEPLOY, timeout=600)[0]
    assert again.returncode == 0, again.stdout[-3000:]
    assert "Build the image from its recipe" not in again.stdout


def test_a_slurm_build_job_runs_before_the_job_that_depends_on_it(slurm, play, setup):
    extra = dict(setup["extra"], optimised_job_build_where="slurm")
    proc = play(None, extra_vars=extra, playbook=DEPLOY, timeout=600)[0]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    train = job_id_of(proc.stdout)
    build = build_job_of(setup["tmp"] / "work" / "modak-build")
    first = scontrol(train)
    deadline = time.time() + 300
    while time.time() < deadline and scontrol(build)["JobState"] in ("PENDING", "RUNNING", "COMPLETING"):
        time.sleep(1)
    built, job = scontrol(build), scontrol(train)
    assert built["JobState"] == "COMPLETED", built
    assert manifest_exists(setup["uri"])
    # the job waited for the build: pending on it at first, or started after it ended
    assert first["Dependency"].startswith("afterok:%s" % build) or job["StartTime"] >= built["EndTime"], (first, job)


@pytest.mark.parametrize("where", ["local", "slurm"])
def test_a_failed_build_stops_the_deploy_with_the_build_log(slurm, play, setup, where):
    extra = dict(setup["extra"], optimised_job_build_where=where, optimised_job_wait=True,
                 optimised_job_build_base_image="localhost/modak-test-missing-base:1")
    proc = play(None, extra_vars=extra, playbook=DEPLOY, timeout=600)[0]
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "modak-test-missing-base" in text, text[-4000:]
    if where == "local":
        assert "building %s/" % setup["uri"].split("/")[2] in text and "image not known" in text
        assert "Submit the job" not in text
    else:
        assert "did not build the image, its log ends" in text and "CANCELLED" in text


def test_a_staging_job_runs_between_the_build_job_and_the_job(slurm, play, setup):
    """build_where slurm with staging: build job -> staging job (afterok) -> the job (afterok). The staging job
    runs `apptainer pull`, which this machine cannot install: it fails, the job is cancelled with it, and when
    that happens before the submission is followed, the play fails with the staging job's log."""
    extra = dict(setup["extra"], optimised_job_build_where="slurm", optimised_job_image_stage=True)
    proc = play(None, extra_vars=extra, playbook=DEPLOY, timeout=600)[0]
    train = job_id_of(proc.stdout)
    build = build_job_of(setup["tmp"] / "work" / "modak-build")
    out = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True, text=True, check=True).stdout
    stages = [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if "JobName=modak-stage " in line
              and "WorkDir=%s " % (setup["tmp"] / "work") in line]
    assert len(stages) == 1, out
    stage = stages[0]["JobId"]
    script = (setup["tmp"] / "work" / ("%s.sbatch.stage.sh" % setup["name"])).read_text()
    assert "apptainer pull --force" in script and setup["uri"] in script
    first_stage, first_train = scontrol(stage), scontrol(train)
    assert first_train["Dependency"].startswith("afterok:%s" % stage), first_train
    deadline = time.time() + 300
    while time.time() < deadline and scontrol(train)["JobState"] in ("PENDING", "RUNNING", "COMPLETING"):
        time.sleep(1)
    built, staged, job = scontrol(build), scontrol(stage), scontrol(train)
    assert built["JobState"] == "COMPLETED", built
    assert first_stage["Dependency"].startswith("afterok:%s" % build) or staged["StartTime"] >= built["EndTime"]
    assert staged["JobState"] == "FAILED" and job["JobState"] == "CANCELLED", (staged, job)
    if proc.returncode != 0:          # the job was cancelled before the play followed it
        assert "the staging job %s did not stage the image" % stage in proc.stdout, proc.stdout[-3000:]
        assert "apptainer: command not found" in proc.stdout
