"""batch_job state=available: each scheduler's class says how to ask it whether it answers (no name map outside
schedulers/, as the TOSCA submit playbook kept one), and a missing or silent command means it does not."""

from __future__ import annotations

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry


@pytest.mark.parametrize("scheduler,argv,answer,available", [
    ("slurm", ["scontrol", "ping"], (0, "Slurmctld(primary) at vm is UP\n", ""), True),
    ("slurm", ["scontrol", "ping"], (1, "Slurmctld(primary) at vm is DOWN\n", ""), False),
    ("slurm", ["scontrol", "ping"], (0, "Slurmctld(primary) at vm is DOWN\n", ""), False),
    # a cluster with a backup controller takes jobs while one of them is up
    ("slurm", ["scontrol", "ping"], (0, "Slurmctld(primary) at a is UP\nSlurmctld(backup) at b is DOWN\n", ""), True),
    ("pbspro", ["qstat", "-B"], (0, "Server  Max Tot Que Run\npbs 0 0 0 0\n", ""), True),
    ("torque", ["qstat", "-B"], (1, "", "Connection refused\n"), False),
    ("gridengine", ["qstat", "-g", "c"], (0, "CLUSTER QUEUE CQLOAD USED\nall.q 0.01 0\n", ""), True),
    ("gridengine", ["qstat", "-g", "c"], (1, "", "error: unable to contact qmaster using port 6444\n"), False),
    ("flux", ["flux", "uptime"], (0, " 01:00:00 run 2.1h,  owner root,  depth 0,  size 4\n", ""), True),
])
def test_each_scheduler_is_asked_in_its_own_words(tmp_path, scheduler, argv, answer, available):
    runner = FakeRunner([(argv, answer)])
    result = run(Request(scheduler=scheduler, state="available", chdir=str(tmp_path)), runner)
    assert result["available"] is available and result["changed"] is False
    assert result["msg"].startswith("%s %s: " % (scheduler, "answers" if available else "does not answer"))


def test_a_run_on_the_host_always_answers_and_runs_nothing(tmp_path):
    result = run(Request(scheduler="local", state="available", chdir=str(tmp_path)), FakeRunner([]))
    assert result["available"] is True


def test_a_scheduler_whose_command_is_missing_does_not_answer(tmp_path):
    class Missing(FakeRunner):
        def run(self, argv, check=True, **kwargs):
            raise SubmitError("%s: command not found" % argv[0])
    result = run(Request(scheduler="slurm", state="available", chdir=str(tmp_path)), Missing([]))
    assert result["available"] is False and "command not found" in result["msg"]


def test_every_batch_scheduler_says_how_to_ask_it():
    for name in registry.NAMES:
        cls = registry.scheduler_class(name)
        assert bool(cls.ping_argv) == registry.capable(name, registry.BATCH), name
