"""Heavy group: a generated Dockerfile built with podman on a local base, pushed to a real registry,
discovered with its labels and chosen by the optimiser. Runs ansible-playbook with the container_build role."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
import yaml

from ansible_collections.sodalite.modak.plugins.module_utils import catalog, pipeline, oci_catalog

DSL = {"job": {
    "job_options": {"job_name": "train"},
    "application": {"executable": "python3 train.py"},
    "target": {"job_scheduler_type": "slurm"},
    "optimisation": {"app_type": "ai_training", "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v2"},
                     "app_type-ai_training": {"config": {"ai_framework": "pytorch"},
                                              "ai_framework-pytorch": {"version": "2.6", "compile": True}}}}}

PLAY = """---
- name: Build a modak image
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Build, push, register
      ansible.builtin.include_role:
        name: sodalite.modak.container_build
"""


def run_role(root, tmp_path, extra):
    play = tmp_path / "play.yml"
    play.write_text(PLAY)
    varsfile = tmp_path / "vars.json"
    python = os.path.join(root, ".venv", "bin", "python")
    varsfile.write_text(json.dumps(dict(extra, ansible_python_interpreter=python)))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(root, "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([os.path.join(root, ".venv", "bin", "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", "-e", "@%s" % varsfile, str(play)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
    return proc


def recap_changed(stdout):
    line = [l for l in stdout.splitlines() if l.startswith("localhost")][-1]
    return int(line.split("changed=")[1].split()[0]), int(line.split("failed=")[1].split()[0])


@pytest.fixture(scope="module")
def built(root, registry, busybox_base, tmp_path_factory):
    work = tmp_path_factory.mktemp("build")
    cat_file = work / "catalog.yaml"
    push = "docker://%s/modak/pytorch:2.6-cpu" % registry["host"]
    extra = {"container_build_dsl": DSL, "container_build_output_dir": str(work / "recipes"),
             "container_build_engine": "podman", "container_build_base_image": busybox_base,
             "container_build_push_to": push, "container_build_tls_verify": False,
             "container_build_catalog": str(cat_file), "container_build_poll": 1}
    # start from no image, so the first run really builds (podman's storage outlives test sessions)
    names = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True,
                           text=True, check=True).stdout.split()
    stale = [n for n in names if n.startswith("localhost/modak/modak-pytorch-2.6-cpu")]
    if stale:
        subprocess.run(["podman", "rmi", "-f"] + stale, check=True, capture_output=True)
    first = run_role(root, work, extra)
    assert "Build asynchronously" in first.stdout and "changed: [localhost]" in first.stdout
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    return {"work": work, "catalog": cat_file, "push": push, "extra": extra, "first": first}


def test_role_builds_the_image_with_its_labels(built):
    recipes = built["work"] / "recipes"
    assert (recipes / "Dockerfile").exists()
    logs = list(recipes.glob("*.build.log"))                 # kept after a successful build, and shown
    assert len(logs) == 1 and "COMMIT" in logs[0].read_text()
    assert "Show the last lines of the build log" in built["first"].stdout
    images = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True,
                            text=True, check=True).stdout.split()
    ours = [i for i in images if i.startswith("localhost/modak/modak-pytorch-2.6-cpu")]
    assert ours, images
    labels = json.loads(subprocess.run(["podman", "image", "inspect", ours[0]], capture_output=True, text=True,
                                       check=True).stdout)[0]["Config"]["Labels"]
    assert labels["modak.framework"] == "pytorch" and labels["modak.compilers"] == "inductor"
    assert len(labels["modak.recipe.sha256"]) == 64
    # the build ran the recipe's steps (stand-ins log them) and its test section
    log = subprocess.run(["podman", "run", "--rm", ours[0], "cat", "/var/log/modak-standin.log"],
                         capture_output=True, text=True, check=True).stdout
    assert "pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu torch==2.6.*" in log
    assert "python3 -c import torch; print(torch.__version__)" in log


def progress_lines(stdout):
    """The async_wait lines: 'localhost: build of <image> RUNNING, waited 0:00:03: <last log line>'."""
    pattern = re.compile(r"^localhost: build of (\S+) (RUNNING|FINISHED|FAILED), waited (\d+:\d\d:\d\d)(?:: (.*))?$")
    return [m.groups() for m in map(pattern.match, stdout.splitlines()) if m]


def test_build_progress_shows_the_time_and_the_logs_last_line_at_each_poll(built):
    lines = progress_lines(built["first"].stdout)
    assert lines and lines[-1][1] == "FINISHED", built["first"].stdout
    assert all(line[0].startswith("localhost/modak/modak-pytorch-2.6-cpu") for line in lines), lines
    assert any(line[3] for line in lines), lines                      # the log's last line, as the build goes
    assert "Wait for the build" in built["first"].stdout and "FAILED - RETRYING" not in built["first"].stdout


def test_second_run_skips_the_build(root, built):
    again = run_role(root, built["work"], built["extra"])
    assert again.returncode == 0, again.stdout[-3000:]
    assert "skipping: [localhost]" in again.stdout
    assert recap_changed(again.stdout) == (0, 0)


def test_catalog_file_lists_the_image_and_optimise_picks_it(built):
    data = yaml.safe_load(built["catalog"].read_text())
    assert [i["uri"] for i in data["images"]] == [built["push"]]
    cat = catalog.ImageCatalog.from_file(str(built["catalog"]))
    result = pipeline.optimise(DSL, cat)
    assert result.choice.source == "catalog" and result.choice.uri == built["push"]


def test_registry_discovery_and_optimise_chooses_the_pushed_image(built, registry):
    embedded = catalog.ImageCatalog.from_file(os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                           "catalog", "images.yaml"))
    before = pipeline.optimise(DSL, embedded)
    assert before.choice.source != "catalog"  # nothing in the embedded catalog offers PyTorch 2.6
    images, warnings = oci_catalog.load(registry["url"], fallback=embedded.images)
    assert warnings == []
    found = [i for i in images if i.uri == built["push"]]
    assert found, ([i.uri for i in images][-5:], warnings)
    image = found[0]
    assert (image.framework, image.version_text, image.build, image.compilers) == (
        "pytorch", "2.6", "optimised-pip", ("inductor",))
    assert dict(image.labels)["modak.recipe.sha256"]
    merged = catalog.ImageCatalog(list(embedded.images) + images, source="embedded+registry")
    after = pipeline.optimise(DSL, merged)
    assert after.choice.source == "catalog" and after.choice.uri == built["push"]
    assert "chosen %s" % image.name in "\n".join(after.explanation)
    assert built["push"] in after.script.text


def test_optimise_module_reads_the_registry(root, built, registry, tmp_path):
    """The optimise module with `registries`: the pushed image joins the embedded catalog and wins;
    an unreachable registry is a warning, not a failure."""
    result_file = tmp_path / "result.json"
    extra = {"dsl": DSL, "output_dir": str(tmp_path / "out"), "result_file": str(result_file),
             "registries": [{"url": registry["url"]}, {"url": "http://127.0.0.1:9", "timeout": 2}]}
    varsfile = tmp_path / "vars.json"
    varsfile.write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(root, ".venv", "bin", "ansible-playbook"), "-e", "@%s" % varsfile,
                           os.path.join(root, "tests", "integration", "playbooks", "optimise_task.yml")],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(result_file.read_text())
    assert data["image"]["uri"] == built["push"] and data["image"]["framework"] == "pytorch"
    assert any("127.0.0.1:9" in w and "not read" in w for w in data["modak_warnings"])


def test_failed_build_keeps_the_previous_image(root, built, tmp_path):
    image = "localhost/modak/keep-me:1"
    subprocess.run(["podman", "tag", "localhost/modak-test-base:latest", image], check=True)
    before = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", image], capture_output=True,
                            text=True, check=True).stdout
    extra = dict(built["extra"], container_build_image=image, container_build_base_image="localhost/missing:none",
                 container_build_push_to="", container_build_catalog="",
                 container_build_output_dir=str(tmp_path / "recipes"))
    failed = run_role(root, tmp_path, extra)
    assert failed.returncode != 0
    assert "the previous image (if any) is unchanged" in failed.stdout
    assert progress_lines(failed.stdout)[-1][1] == "FAILED", failed.stdout
    after = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", image], capture_output=True,
                           text=True, check=True).stdout
    assert after == before
