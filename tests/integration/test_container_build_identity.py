"""The container_build role names a SIF by its recipe hash and counts an image as built only when its recipe label
equals the recipe hash exactly (real ansible-playbook in check mode, the role on localhost, a stand-in apptainer
that prints the labels an image would have: Apptainer does not install on these machines)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAY = """- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Build
      ansible.builtin.include_role:
        name: sodalite.modak.container_build
      vars:
        container_build_dsl_file: %s
        container_build_output_dir: %s
        container_build_engine: apptainer
    - name: Show the target
      ansible.builtin.debug:
        msg: "TARGET={{ container_build_target }} SHA={{ container_build_recipe.recipe_sha256 }}"
"""


def _run(tmp_path, labels):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "apptainer"
    stub.write_text("#!/bin/sh\n[ \"$1\" = inspect ] && cat %s && exit 0\nexit 0\n" % (tmp_path / "labels"))
    stub.chmod(0o755)
    (tmp_path / "labels").write_text(labels)
    play = tmp_path / "play.yml"
    play.write_text(PLAY % (os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml"), tmp_path / "out"))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0", PATH="%s:%s" % (bin_dir, os.environ["PATH"]))
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), str(play), "--check",
                           "-e", "ansible_python_interpreter=%s" % sys.executable], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = [l for l in proc.stdout.splitlines() if "TARGET=" in l][0]
    target, sha = line.split("TARGET=")[1].split('"')[0].split(" SHA=")
    return proc.stdout, target, sha


def _sha(tmp_path):
    return _run(tmp_path, "")[2]


def test_the_sif_is_named_by_the_recipe_hash(tmp_path):
    _out, target, sha = _run(tmp_path, "")
    assert os.path.basename(target).endswith("-%s.sif" % sha[:12]), target


@pytest.mark.parametrize("labels,built", [
    ("modak.recipe.sha256: {sha}\n", True),
    ("org.label-schema.build-date: today\nmodak.recipe.sha256: {sha}\n", True),
    ("modak.recipe.sha256: 0{sha}\n", False),
    ("other.label: x{sha}y\nmodak.recipe.sha256: 1234\n", False),
    ("note: {sha}\n", False),
], ids=["same", "same-among-others", "longer", "substring-of-another-label", "another-label"])
def test_built_only_when_the_label_is_the_recipe_hash(tmp_path, labels, built):
    sha = _sha(tmp_path)
    out, _target, _sha2 = _run(tmp_path, labels.format(sha=sha))
    assert ("check mode: would build " not in out) == built, out[-3000:]
