"""The raw options extra_directives may carry: each scheduler declares its own allow-list in its class, and
validating a DSL loads only the backend it names."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, dsl_rules
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra, registry


def _doc(scheduler, directives, **target):
    return {"job": {"job_options": {"job_name": "h", "extra_directives": directives},
                    "application": {"executable": "./app"},
                    "target": dict({"job_scheduler_type": scheduler}, **target)}}


def _problems(doc):
    try:
        dsl.parse(doc)
    except DslInvalid as exc:
        return exc.problems
    return []


# what the review planted through Grid Engine's #$ lines: files, the shell, the directory, the user, a binary, the key
GE_HOSTILE = ["-o /etc/cron.d/x", "-e /etc/cron.d/x", "-S /tmp/sh", "-wd /root", "-u root", "-b y", "-ac modak=abc",
              "-sc modak=abc", "-i /etc/shadow", "-jsv /tmp/x", "-C X", "-clear", "-sync y", "-terse", "-w v",
              "-shell n", "-noshell", "-@ /tmp/opts", "-cwd"]


@pytest.mark.parametrize("scheduler", ["gridengine", "sge"])
@pytest.mark.parametrize("directive", GE_HOSTILE)
def test_grid_engine_refuses_options_outside_its_list(scheduler, directive):
    problems = _problems(_doc(scheduler, [directive]))
    assert [p.path for p in problems] == ["job.job_options.extra_directives[0]"], (directive, problems)


@pytest.mark.parametrize("directive", ["-l arch=lx-amd64", "-pe mpi 8", "-P physics", "-p -10", "-w e", "-R y", "-r n",
                                       "-ar 12", "-binding linear:4", "-l scratch=10G", "-hold_jid_ad 7", "-js 10",
                                       "-ckpt blcr", "-now n", "-notify", "-h", "-masterq all.q@n1"])
def test_grid_engine_takes_the_options_it_declares(directive):
    assert _problems(_doc("gridengine", [directive])) == []


@pytest.mark.parametrize("directive", ["-N x", "-q all.q", "-A acct", "-t 1-4", "-tc 2", "-hold_jid 4", "-m e",
                                       "-M me@example.org", "-V", "-v A=1", "-j y", "-a 202601010000"])
def test_grid_engine_names_the_typed_field(directive):
    problems = _problems(_doc("gridengine", [directive]))
    assert len(problems) == 1 and "job_options." in problems[0].hint, problems


def test_an_unknown_scheduler_lets_no_directive_through():
    assert extra.problem("lsf", "--output=/etc/x") is not None
    assert dsl_rules.directive_problems(["-o /etc/x"], "lsf")


def test_a_batch_scheduler_that_declares_no_option_refuses_every_one(monkeypatch):
    monkeypatch.setattr(registry.scheduler_class("torque"), "allowed_options", {})
    found = extra.problem("torque", "-l nodes=1")
    assert found and "declares no" in found[0]


def test_every_batch_scheduler_declares_its_list():
    for name in registry.NAMES:
        backend = registry.scheduler_class(name)
        if registry.capable(name, registry.BATCH):
            assert backend.allowed_options and backend.typed_options, name
            assert not set(backend.allowed_options) & set(backend.typed_options), name
        else:
            assert extra.problem(name, "--anything") is None     # no directive is written at all


def test_aliases_come_from_the_registry_alone():
    assert not hasattr(dsl_rules, "SCHEDULER_ALIASES")
    assert registry.ALIASES["sge"] == "gridengine"
    assert dsl_rules.scheduler_of({"job": {"target": {"job_scheduler_type": "sge"}}}) == "gridengine"
    # queue_type and job_scheduler_type naming the same scheduler, one by its alias, do not differ
    assert _problems(_doc("gridengine", [], queue_type="sge")) == []


PROBE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.module_utils import dsl, schema  # noqa
for name in ("pytorch-cpu-slurm.yaml",):
    dsl.parse(dsl.load_file(sys.argv[2] + "/examples/" + name))
doc = {"job": {"application": {"executable": "./a"}, "target": {"job_scheduler_type": "sge"},
               "job_options": {"extra_directives": ["-l arch=lx-amd64"]}}}
dsl.parse(doc)
prefix = "ansible_collections.sodalite.modak.plugins.module_utils."
print(" ".join(sorted(m for m in sys.modules if m in (prefix + "commands", prefix + "job_control")
                      or (m.startswith(prefix + "schedulers.")
                          and m.rsplit(".", 1)[1] not in ("registry", "extra", "base", "submission")))))
"""


def test_validating_a_dsl_loads_only_the_backend_it_names_and_no_process_code():
    """The Grid Engine backend (its raw options), not another, and not modak's command runner (archspec, which
    reads the CPU, is not modak's)."""
    done = subprocess.run([sys.executable, "-c", PROBE, ROOT + "/collections", ROOT], capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["ansible_collections.sodalite.modak.plugins.module_utils.schedulers.gridengine"]


def test_a_backend_loads_on_first_use():
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                           "from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry;"
                           "registry.get('sge');"
                           "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if '.schedulers.' in m))",
                           ROOT + "/collections"], capture_output=True, text=True, check=True)
    loaded = eval(done.stdout)  # pylint: disable=eval-used
    assert "gridengine" in loaded and not {"slurm", "local", "pbspro", "torque"} & set(loaded)


def test_wait_all_nodes_passes_with_its_two_values_only():
    """`#SBATCH --wait-all-nodes=1`, as multi-node training scripts write it: it names no file."""
    assert _problems(_doc("slurm", ["--wait-all-nodes=1"])) == []
    assert _problems(_doc("slurm", ["--wait-all-nodes=0"])) == []
    assert [p.path for p in _problems(_doc("slurm", ["--wait-all-nodes=2"]))] == [
        "job.job_options.extra_directives[0]"]


def test_an_account_may_name_its_partition():
    doc = _doc("slurm", [])
    doc["job"]["job_options"]["account"] = "project@gpu-partition"
    assert _problems(doc) == []
    for bad in ("project@", "@gpu", "a@b@c", "pro ject"):
        doc["job"]["job_options"]["account"] = bad
        assert [p.path for p in _problems(doc)] == ["job.job_options.account"], bad


# -- srun's options of the launch (application.launch_options, cpu_bind, gpu_bind) ---------------------------------

def _launch_doc(scheduler="slurm", **app):
    return {"job": {"job_options": {"job_name": "l"}, "application": dict({"executable": "./app"}, **app),
                    "target": {"job_scheduler_type": scheduler}}}


@pytest.mark.parametrize("option", ["--kill-on-bad-exit=1", "--kill-on-bad-exit", "-K", "--wait=60",
                                    "--distribution=block:block", "--mpi=pmix", "--accel-bind=gn",
                                    "--hint=nomultithread", "--exact", "--gpus-per-task=1"])
def test_training_scripts_srun_options_pass(option):
    assert _problems(_launch_doc(launch_options=[option])) == []


@pytest.mark.parametrize("option,words", [
    ("--output=x", "not an accepted"), ("--export=ALL", "not an accepted"), ("--ntasks=4", "core_count"),
    ("--container-image=x", "container_runtime"), ("--mpi=foo", "accepts only"), ("--exact=1", "no value")])
def test_other_srun_options_are_refused_by_path(option, words):
    (problem,) = _problems(_launch_doc(launch_options=["--wait=5", option]))
    assert problem.path == "job.application.launch_options[1]" and words in str(problem)


def test_binding_fields_become_srun_options():
    request = dsl.parse(_launch_doc(launch_options=["--wait=5"], cpu_bind="cores", gpu_bind="closest"))
    assert request.app.launch_options == ("--wait=5", "--cpu-bind=cores", "--gpu-bind=closest")
    assert [p.path for p in _problems(_launch_doc(cpu_bind="cores; rm -rf /"))] == ["job.application.cpu_bind"]
    assert [p.path for p in _problems(_launch_doc(gpu_bind="map_gpu:0,1", launch_options=["--gpu-bind=none"]))] == [
        "job.application.launch_options[0]"]


@pytest.mark.parametrize("scheduler", ["pbspro", "gridengine", "local"])
def test_srun_options_need_slurm(scheduler):
    found = _problems(_launch_doc(scheduler, launch_options=["--wait=5"], gpu_bind="closest"))
    assert sorted(p.path for p in found) == ["job.application.gpu_bind", "job.application.launch_options"]
