"""The optimised_job role fetches a job's output only when it is a regular file: a job that leaves a link to a file
it may not read (/etc/shadow) in place of its output gets nothing copied to the controller (real ansible-playbook,
playbooks/deploy.yml, a local job)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _deploy(tmp_path, secret):
    dsl_file = tmp_path / "linker.yaml"
    dsl_file.write_text(
        "job:\n  job_options:\n    job_name: linker\n    standard_output_file: out.txt\n"
        "  application:\n    executable: /bin/ln\n    arguments: -sf %s out.txt\n"
        "  target:\n    job_scheduler_type: local\n    work_dir: %s\n" % (secret, tmp_path / "work"))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0")
    return subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"),
                           os.path.join(ROOT, "playbooks", "deploy.yml"), "-e", "dsl_file=%s" % dsl_file,
                           "-e", "optimised_job_output_dir=%s" % (tmp_path / "out"),
                           "-e", "optimised_job_poll_interval=0.3", "-e", "ansible_python_interpreter=%s" % sys.executable],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_an_output_that_is_a_link_is_not_fetched(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("root:$6$hash:19000::::::\n")
    secret.chmod(0o600)
    proc = _deploy(tmp_path, secret)
    assert os.path.islink(str(tmp_path / "work" / "out.txt")), proc.stdout
    fetched = [os.path.join(d, f) for d, _dirs, files in os.walk(str(tmp_path / "out")) for f in files]
    assert not [f for f in fetched if os.path.basename(f) == "out.txt"], fetched
    assert proc.returncode != 0 and "not a regular file" in proc.stdout, proc.stdout[-3000:]
