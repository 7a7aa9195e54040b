"""Scheduler allow-lists of extra_directives: a comma list of -W attributes is checked item by item (qsub applies
each), and the raw options a typed field sets are refused with that field named."""

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
