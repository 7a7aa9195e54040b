"""Scheduler allow-lists of extra_directives: a comma list of -W attributes or -l resources is checked item by item
(qsub applies each), and the raw options a typed field sets are refused with that field named."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid


def _doc(scheduler, directives=(), **options):
    job_options = dict({"job_name": "h"}, **options)
    if directives:
        job_options["extra_directives"] = list(directives)
    return {"job": {"job_options": job_options, "application": {"executable": "./app", "container_runtime": ""},
                    "target": {"job_scheduler_type": scheduler}}}


def _problems(doc):
    try:
        dsl.parse(doc)
    except DslInvalid as exc:
        return exc.problems
    return []


@pytest.mark.parametrize("scheduler,directive", [
    ("pbspro", "-W umask=077,stageout=/etc/passwd@host:/tmp/x"),
    ("pbspro", "-W sandbox=PRIVATE,group_list=wheel"),
    ("pbspro", "-W umask=077,depend=afterok:1"),
    ("torque", "-W umask=077,depend=afterok:1"),
    ("torque", "-W umask=077,stagein=/tmp/x@host:/etc/shadow"),
])
def test_every_attribute_of_a_comma_list_is_checked(scheduler, directive):
    problems = _problems(_doc(scheduler, [directive]))
    assert [p.path for p in problems] == ["job.job_options.extra_directives[0]"], problems


@pytest.mark.parametrize("scheduler,directive", [("pbspro", "-W umask=077"), ("pbspro", "-W umask=077,block=true"),
                                                 ("torque", "-W umask=077,block=true")])
def test_a_comma_list_of_allowed_attributes_still_passes(scheduler, directive):
    assert _problems(_doc(scheduler, [directive])) == []


@pytest.mark.parametrize("scheduler,directive,refused", [
    ("torque", "-l epilogue=/home/u/e.sh", "epilogue"),
    ("torque", "-l prologue=/home/u/p.sh,walltime=1:00:00", "prologue"),
    ("torque", "-l feature=x,epilogue.user=/home/u/e.sh", "epilogue.user"),
    ("torque", "-l trig=AType=exec,Action=/home/u/x", "trig"),
    ("torque", "-l walltime=1:00:00", "walltime"),
    ("pbspro", "-l place=scatter,aoe=myimage", "aoe"),
    ("pbspro", "-l select=2:ncpus=4", "select"),
])
def test_every_resource_of_the_l_comma_list_is_checked(scheduler, directive, refused):
    """Torque's -l prologue=/path and epilogue=/path name scripts that run with the job: -l passed with any value
    before; each resource of its comma list is now checked against the dialect's list, failing closed."""
    problems = _problems(_doc(scheduler, [directive]))
    assert [p.path for p in problems] == ["job.job_options.extra_directives[0]"], problems
    assert problems[0].message.endswith("here, not %s" % refused) and problems[0].hint, problems


@pytest.mark.parametrize("scheduler,directive", [("torque", "-l feature=x"), ("torque", "-l gres=matlab:1,nice=5"),
                                                 ("pbspro", "-l place=scatter:excl"),
                                                 ("pbspro", "-l software=abaqus,preempt_targets=NONE")])
def test_resources_that_name_no_file_still_pass(scheduler, directive):
    assert _problems(_doc(scheduler, [directive])) == []


@pytest.mark.parametrize("directive,field", [("--mem-per-gpu=16G", "memory_per_gpu"), ("--tmp=100G", "local_scratch"),
                                             ("--mem-per-gpu 8G", "memory_per_gpu")])
def test_slurm_refuses_raw_options_of_the_typed_memory_and_scratch_fields(directive, field):
    problems = _problems(_doc("slurm", [directive], memory_limit="4G"))
    assert len(problems) == 1 and field in problems[0].message + (problems[0].hint or ""), problems


def test_pbspro_refuses_memory_per_gpu_without_gpus(catalog):
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(_doc("pbspro", node_count=1, memory_per_gpu="16G"), catalog)
    assert [p.path for p in err.value.problems] == ["job.job_options.memory_per_gpu"]
    with_gpus = pipeline.optimise(_doc("pbspro", node_count=1, memory_per_gpu="16G", request_gpus=2), catalog)
    assert "mem=32768mb" in with_gpus.script.text
