"""A real single-host Grid Engine (Son of Grid Engine 8.1.9 from Debian) for the tests in this folder.

The session fixture ``gridengine`` runs start-gridengine.sh, which unpacks Debian's gridengine packages into a
private prefix when missing (gridengine-client conflicts with Slurm's PBS wrappers, which other tests use),
starts sge_qmaster and sge_execd on this host and configures a queue ``all.q`` with the parallel environments
``smp`` and ``mpi``. It yields the environment the clients need (SGE_ROOT, ports, PATH with the Grid Engine
clients first). It needs root and apt-get; without them the tests fail with a message that says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest
import services

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
START = os.path.join(HERE, "start-gridengine.sh")
STOP = os.path.join(HERE, "stop-gridengine.sh")
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
GE_ROOT = "/var/lib/modak-gridengine"
SLOTS = 4


def ge_environment():
    """The environment of start-gridengine.sh's env.sh, on top of this process's."""
    env = dict(os.environ)
    with open(os.path.join(GE_ROOT, "env.sh")) as handle:
        for line in handle:
            for word in line.split()[1:]:
                key, _sep, value = word.partition("=")
                env[key] = value.replace("$PATH", os.environ.get("PATH", ""))
    return env


def start_gridengine():
    proc = subprocess.run(["bash", START], env=dict(os.environ, GE_SLOTS=str(SLOTS)), capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode != 0:
        pytest.fail("start-gridengine.sh failed (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr),
                    pytrace=False)
    return True


def stop_gridengine(_value):
    subprocess.run(["bash", STOP], capture_output=True, timeout=60, check=False)


@pytest.fixture(scope="session")
def gridengine(tmp_path_factory):
    """Grid Engine's client environment; the daemons run once per run (services.shared)."""
    if os.geteuid() != 0:
        pytest.fail("the Grid Engine tests start a real Grid Engine and must run as root", pytrace=False)
    with services.shared(tmp_path_factory, "gridengine", start_gridengine, stop_gridengine):
        yield ge_environment()


class Play(object):
    """Runs tasks through the real ansible-playbook in the Grid Engine environment; returns the registered r."""

    def __init__(self, tmp_path, env):
        self.tmp = tmp_path
        self.env = env
        self.count = 0

    def __call__(self, tasks, check=False, timeout=300):
        self.count += 1
        out = self.tmp / ("result-%d.json" % self.count)
        playbook = self.tmp / ("play-%d.yml" % self.count)
        playbook.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
                            + textwrap.indent(textwrap.dedent(tasks), "    ")
                            + "    - name: Save the results\n      check_mode: false\n      ansible.builtin.copy:\n"
                            + "        content: \"{{ r | to_json }}\"\n        dest: %s\n" % out)
        argv = [PLAYBOOK, str(playbook)] + (["--check"] if check else [])
        env = dict(self.env, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_LOCALHOST_WARNING="0")
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        return proc, (json.loads(out.read_text()) if out.exists() else None)


@pytest.fixture
def play(tmp_path, gridengine):
    return Play(tmp_path, gridengine)


def batch_job(**args):
    return ("- name: Batch job\n  sodalite.modak.batch_job: %s\n  register: r\n  ignore_errors: true\n"
            % json.dumps(args))
