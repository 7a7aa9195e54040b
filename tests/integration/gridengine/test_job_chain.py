"""modak's own jobs on a real scheduler, chained by ``after``: an image build job written by the scheduler's class
(container_build_plan), then a job submitted with batch_job's ``after`` that runs only once the build has ended and
finds the image. Under Slurm (after ok: --dependency=afterok, --kill-on-invalid-dep=yes) and Grid Engine (after
any: -hold_jid, which waits for the end whatever the exit status). A tiny recipe (FROM scratch, one file) is
enough: what is proven is the chaining."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import uuid

import pytest
import services

from ansible_collections.sodalite.modak.plugins.module_utils import jobspec

# podman, installed once per run by the container tests' fixture
from containers.conftest import container_tools  # noqa: F401  pylint: disable=unused-import

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
KIND = {"slurm": "ok", "gridengine": "any"}
DEPENDENCY = {"slurm": lambda job: ["--dependency=afterok:%s" % job, "--kill-on-invalid-dep=yes"],
              "gridengine": lambda job: ["-hold_jid", job]}


@pytest.fixture(params=["slurm", "gridengine"])
def scheduler(request):
    """The scheduler's client environment: the session's Slurm cluster, or its Grid Engine."""
    if request.param == "slurm":
        request.getfixturevalue("slurm")
        return request.param, dict(os.environ)
    return request.param, request.getfixturevalue("gridengine")


def play(tasks, env, tmp_path):
    out = tmp_path / "results.json"
    playbook = tmp_path / "play.yml"
    playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                        + textwrap.indent(textwrap.dedent(tasks), "    ")
                        + "    - name: Save the results\n      ansible.builtin.copy:\n"
                        + "        content: \"{{ {'build': build, 'after': r} | to_json }}\"\n"
                        + "        dest: %s\n" % out)
    proc = subprocess.run([PLAYBOOK, str(playbook)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False, env=dict(env, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                                                ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0"))
    return proc, (json.loads(out.read_text()) if out.exists() else None)


def test_a_build_job_then_a_job_after_it(scheduler, container_tools, tmp_path):  # noqa: F811
    name, env = scheduler
    services.podman_settings()
    image = "localhost/modak-chain-test:%s" % uuid.uuid4().hex[:12]
    (tmp_path / "hello.txt").write_text("built by a %s job\n" % name)
    (tmp_path / "Containerfile").write_text("FROM scratch\nCOPY hello.txt /hello.txt\n")
    after_job, _warnings = jobspec.render(jobspec.JobSpec(
        name="after-build", steps=(("podman", "image", "exists", image),), purpose="the image is there"), name)
    (tmp_path / after_job.filename).write_text(after_job.text)
    tasks = """\
    - name: Plan the build, its job script written for the scheduler
      sodalite.modak.container_build_plan:
        engine: podman
        recipe: {tmp}/Containerfile
        image: {image}
        context: {tmp}
        cpus: 1
        walltime: "00:10:00"
        scheduler: {name}
      register: plan
    - name: Write the build job script
      ansible.builtin.copy:
        content: "{{{{ plan.job_script }}}}"
        dest: "{tmp}/modak-build{{{{ plan.job_script_suffix }}}}"
        mode: "0755"
    - name: Submit the build job
      sodalite.modak.batch_job:
        script: "{tmp}/modak-build{{{{ plan.job_script_suffix }}}}"
        scheduler: {name}
        chdir: {tmp}
      register: build
    - name: Submit the job after it, and wait for it
      sodalite.modak.batch_job:
        script: {tmp}/{after}
        scheduler: {name}
        chdir: {tmp}
        after: [{{job_id: "{{{{ build.job_id }}}}", kind: {kind}}}]
        wait: true
        wait_timeout: 300
        poll_interval: 1
      register: r
    """.format(tmp=tmp_path, image=image, name=name, after=after_job.filename, kind=KIND[name])
    try:
        proc, result = play(tasks, env, tmp_path)
        assert proc.returncode == 0 and result, proc.stdout[-4000:] + proc.stderr[-2000:]
        build, after = result["build"], result["after"]
        assert (after["state"], after["exit_code"]) == ("COMPLETED", 0), after
        # the job was submitted after the build job, in the scheduler's words
        assert after["cmd"][-1 - len(DEPENDENCY[name](build["job_id"])):-1] == DEPENDENCY[name](build["job_id"])
        listed = subprocess.run(["podman", "image", "exists", image], check=False)
        assert listed.returncode == 0
    finally:
        subprocess.run(["podman", "rmi", "-f", image], capture_output=True, check=False)
