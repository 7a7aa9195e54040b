"""One launcher field (issue 28): application.launcher names every launcher, MPI's and a distributed training's,
from one registry whose launchers are one file each; distributed_launch is its old name, read as it."""

from __future__ import annotations

import copy

import pytest
from test_distributed import CONFIG, ddp_doc, problems

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry

EMPTY = ImageCatalog([])


def with_launcher(doc, launcher):
    doc = copy.deepcopy(doc)
    doc["job"]["application"]["launcher"] = launcher
    return doc


@pytest.mark.parametrize("launch", ["srun", "torchrun", "accelerate"])
@pytest.mark.parametrize("scheduler", ["slurm", "gridengine"])
def test_application_launcher_writes_what_distributed_launch_wrote(launch, scheduler):
    """Before, application.launcher took MPI launchers only and refused any with distributed training."""
    nodes = 2 if scheduler == "slurm" else 1
    old = ddp_doc(nodes=nodes, scheduler=scheduler, distributed_launch=launch)
    new = with_launcher(ddp_doc(nodes=nodes, scheduler=scheduler), launch)
    if scheduler == "gridengine" and launch == "srun":
        assert list(problems(new)) == ["job.application.launcher"]
        assert list(problems(old)) == [CONFIG + ".distributed_launch"]      # named as the user wrote it
        return
    written = pipeline.optimise(new, EMPTY)
    assert written.script.text == pipeline.optimise(old, EMPTY).script.text
    assert written.settings.distributed.launch in (launch, "standalone")


def test_the_old_name_is_read_as_the_field_and_said():
    request = dsl.parse(ddp_doc(distributed_launch="torchrun"))
    assert request.app.launcher == "torchrun" and request.opt.distributed.launch == "torchrun"
    assert any("distributed_launch 'torchrun' is read as application.launcher" in n for n in request.notes)


def test_both_names_that_disagree_are_refused_at_the_old_one():
    found = problems(with_launcher(ddp_doc(distributed_launch="accelerate"), "torchrun"))
    assert "is the old name of application.launcher, which says torchrun" in found[CONFIG + ".distributed_launch"]
    assert dsl.parse(with_launcher(ddp_doc(distributed_launch="torchrun"), "torchrun")).opt.distributed.launch == \
        "torchrun"


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_a_training_launcher_without_distributed_training_is_refused_by_path(launcher):
    doc = with_launcher(ddp_doc(ppn=None), launcher)
    del doc["job"]["optimisation"]["app_type-ai_training"]["config"]["distributed_training"]
    assert "applies only to distributed training" in problems(doc)["job.application.launcher"]


@pytest.mark.parametrize("launcher,words", [("mpirun", "not a distributed training's"),
                                            ("mpiexec", "not a distributed training's"),
                                            ("none", "none starts no rank")])
def test_a_training_refuses_mpis_launchers_and_none(launcher, words):
    assert words in problems(with_launcher(ddp_doc(), launcher))["job.application.launcher"]


@pytest.mark.parametrize("scheduler", ["gridengine", "pbspro", "local"])
def test_srun_for_an_mpi_program_needs_slurm(scheduler):
    """A fresh-eyes review found `launcher: srun` accepted under schedulers without srun."""
    doc = {"job": {"application": {"executable": "./a", "mpi_ranks": 4, "launcher": "srun"},
                   "target": {"job_scheduler_type": scheduler}}}
    assert "srun needs Slurm" in problems(doc)["job.application.launcher"]


def test_every_launcher_is_one_file_found_through_the_registry():
    for descriptor in registry.LAUNCHERS:
        launcher = registry.get(descriptor.name)
        assert launcher.name == descriptor.name
        assert type(launcher).__module__.endswith(".launchers." + descriptor.name)
    assert registry.NAMES == ("auto", "srun", "mpirun", "mpiexec", "torchrun", "accelerate", "lightning", "deepspeed",
                              "none")
    assert registry.PER_NODE == ("torchrun", "accelerate", "deepspeed")


def test_lightning_is_srun_per_rank_with_the_program_as_it_is():
    """Lightning's Slurm guide: --ntasks-per-node = devices, then `srun python train.py`; Lightning reads Slurm's
    variables itself, so no wrapper sets the rank variables."""
    doc = ddp_doc(engine="podman")
    doc["job"]["application"].update(launcher="lightning", container_runtime="", executable="python3 train.py",
                                     arguments=[])
    result = pipeline.optimise(doc, EMPTY)
    text = result.script.text
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n" in text
    assert text.rstrip().endswith("\nsrun --nodes=2 --ntasks=4 --ntasks-per-node=2 python3 train.py")
    assert 'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)"' in text
    assert "bash -c" not in text.split("\nsrun ", 1)[1]
    assert (result.settings.ranks, result.settings.tasks_per_node) == (4, 2)


def test_lightning_in_a_container_gets_slurms_variables_by_name():
    doc = with_launcher(ddp_doc(engine="podman"), "lightning")
    line = pipeline.optimise(doc, EMPTY).script.text.rstrip().splitlines()[-1]
    for name in ("MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
                 "SLURM_NTASKS_PER_NODE", "SLURM_NODEID", "SLURM_JOB_NAME"):
        assert "--env %s " % name in line, line


@pytest.mark.parametrize("change,path", [
    ({"job.target.job_scheduler_type": "pbspro"}, "job.application.launcher"),
    ({"job.job_options.job_name": "interactive"}, "job.job_options.job_name")])
def test_lightning_is_refused_where_it_would_not_see_slurm(change, path):
    doc = with_launcher(ddp_doc(nodes=1), "lightning")
    for key, value in change.items():
        where = doc
        for part in key.split(".")[:-1]:
            where = where[part]
        where[key.split(".")[-1]] = value
    assert path in problems(doc)
