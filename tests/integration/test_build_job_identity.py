"""The container_build role's Slurm build job: the job id is read from `sbatch --parsable`'s 'id;cluster' answer of
multi-cluster sites, and two recipes built from one directory get two job scripts (real ansible-playbook, the role
on localhost submitting with batch_job, a stand-in sbatch that answers as a multi-cluster site does and records what it
submits, and a stand-in squeue and scontrol that know the job)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAY = """- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Build {name}
      ansible.builtin.include_role:
        name: sodalite.modak.container_build
      vars:
        container_build_dsl_file: {dsl}
        container_build_output_dir: {out}
        container_build_engine: podman
        container_build_where: slurm
        container_build_submit: true
    - name: Show the job
      ansible.builtin.debug:
        msg: "JOB={{{{ container_build_job_id }}}}"
"""


def _build(tmp_path, dsl):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for command, text in (("sbatch", 'echo "$@" >> %s\necho "42;cluster1"' % (tmp_path / "submitted")),
                          ("squeue", "true"),
                          ("scontrol", 'echo "JobId=42 JobName=modak-build JobState=PENDING Reason=Dependency"')):
        stub = bin_dir / command
        stub.write_text("#!/bin/sh\n%s\n" % text)
        stub.chmod(0o755)
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(name=os.path.basename(dsl), dsl=dsl, out=tmp_path / "out"))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0", PATH="%s:%s" % (bin_dir, os.environ["PATH"]))
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), str(play),
                           "-e", "ansible_python_interpreter=%s" % sys.executable], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return [line.split("JOB=")[1].split('"')[0] for line in proc.stdout.splitlines() if "JOB=" in line][0]


def test_the_job_id_of_a_multi_cluster_answer_and_one_script_per_recipe(tmp_path):
    first = _build(tmp_path, os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml"))
    second = _build(tmp_path, os.path.join(ROOT, "examples", "pytorch-mnist-slurm.yaml"))
    assert first == second == "42"                                  # not '42;cluster1': afterok:42 is valid
    scripts = sorted(p.name for p in (tmp_path / "out").iterdir() if p.name.endswith(".sbatch"))
    assert len(scripts) == 2 and all(s.startswith("modak-build-") for s in scripts), scripts
    submitted = (tmp_path / "submitted").read_text().splitlines()
    assert sorted(line.split()[-1].rsplit("/", 1)[1] for line in submitted) == scripts, submitted
