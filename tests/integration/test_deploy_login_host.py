"""playbooks/deploy.yml: the DSL may only send the job to a login node of the inventory (real ansible-playbook)."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import ROOT

DEPLOY = os.path.join(ROOT, "playbooks", "deploy.yml")


def deploy(tmp_path, login_host, *extra):
    work = tmp_path / "work"
    dsl_file = tmp_path / "hello.yaml"
    dsl_file.write_text(
        "job:\n  job_options:\n    job_name: hello\n"
        "  application:\n    executable: /bin/echo\n    arguments: hello\n"
        "  target:\n    job_scheduler_type: local\n    login_host: %s\n    work_dir: %s\n" % (login_host, work))
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(
        "[login]\nhpc01 ansible_connection=local ansible_python_interpreter=%s\n\n"
        "[db]\ndb01 ansible_connection=local ansible_python_interpreter=%s\n" % (sys.executable, sys.executable))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0")
    argv = [os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), DEPLOY, "-i", str(inventory),
            "-e", "dsl_file=%s" % dsl_file, "-e", "optimised_job_output_dir=%s" % (tmp_path / "out"),
            "-e", "optimised_job_poll_interval=1"] + list(extra)
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    return proc, work


def test_a_dsl_cannot_send_the_job_to_an_unrelated_inventory_host(tmp_path):
    proc, work = deploy(tmp_path, "db01")
    assert proc.returncode != 0, proc.stdout
    assert "is not a host of the inventory group 'login'" in proc.stdout, proc.stdout
    assert "db01" not in proc.stdout.split("PLAY RECAP")[-1], proc.stdout     # nothing ran there
    assert not work.exists()


def test_a_dsl_may_name_a_login_node_of_the_inventory(tmp_path):
    proc, work = deploy(tmp_path, "hpc01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hpc01" in proc.stdout.split("PLAY RECAP")[-1] and "COMPLETED" in proc.stdout, proc.stdout


def test_the_operator_may_name_any_host_explicitly(tmp_path):
    proc, work = deploy(tmp_path, "db01", "-e", "login_host=db01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "db01" in proc.stdout.split("PLAY RECAP")[-1], proc.stdout


def test_the_job_script_is_placed_once_in_the_work_directory(tmp_path):
    """Issue 29: the optimise task places the script on the login node itself (nothing on the controller, no
    second copy task); a second run changes nothing there, and --check --diff reads it back as unchanged."""
    proc, work = deploy(tmp_path, "hpc01", "-e", "optimised_job_rerun=false")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (work / "hello.sh").is_file() and not (tmp_path / "out" / "hello.sh").exists()
    assert "Copy the job script" not in proc.stdout
    again, _work = deploy(tmp_path, "hpc01", "--check", "--diff")
    assert again.returncode == 0, again.stdout + again.stderr
    placed = again.stdout.split("Optimise the DSL on the controller and place the job script")[1].split("TASK")[0]
    assert "ok: [hpc01]" in placed and "changed" not in placed, placed
