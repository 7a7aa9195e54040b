"""The ``play`` fixture of the Slurm tests; the cluster itself is the session fixture ``slurm`` of
tests/integration/conftest.py."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")


class Play(object):
    """Runs tasks through the real ansible-playbook from the checkout's root; returns registered results."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.count = 0

    def __call__(self, tasks, extra_vars=None, playbook=None, check=False, timeout=300, env=None):
        self.count += 1
        out = self.tmp / ("result-%d.json" % self.count)
        if playbook is None:
            playbook = self.tmp / ("play-%d.yml" % self.count)
            body = ("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                    + textwrap.indent(textwrap.dedent(tasks), "    ")
                    + "    - name: Save the results\n      check_mode: false\n      ansible.builtin.copy:\n"
                    + "        content: \"{{ r | to_json }}\"\n"
                    + "        dest: %s\n" % out)
            playbook.write_text(body)
        argv = [PLAYBOOK, str(playbook)]
        for key, value in (extra_vars or {}).items():
            argv += ["-e", json.dumps({key: value})]
        if check:
            argv.append("--check")
        env = dict(env or os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_LOCALHOST_WARNING="0")
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False)
        result = json.loads(out.read_text()) if out.exists() else None
        return proc, result


def queued_from(directory):
    """The ids of the queued jobs submitted from ``directory``: other tests of the run submit jobs at the same time,
    so a test looks at its own jobs only."""
    out = subprocess.run(["squeue", "-h", "-o", "%i %Z"], capture_output=True, text=True, check=True).stdout
    jobs = [line.split(" ", 1) for line in out.splitlines() if " " in line]
    return sorted(job for job, workdir in jobs if workdir == str(directory) or workdir.startswith(str(directory) + "/"))


@pytest.fixture
def play(tmp_path):
    return Play(tmp_path)
