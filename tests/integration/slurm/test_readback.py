"""The real scheduler as the oracle: scripts modak writes are submitted held, and what Slurm read back from them
(``scontrol show job -o``) must be what the DSL asked for. Torque scripts go through Slurm's ``qsub`` wrapper
(sbatch reads their ``#PBS`` lines). Every example, every accepted corpus document and generated documents."""

from __future__ import annotations

import copy
import os
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import corpus
from helpers import EXAMPLES as EXAMPLE_PATHS, ROOT, load

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

from . import readback, strategies

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
EXAMPLES = [os.path.basename(path) for path in EXAMPLE_PATHS]   # the DSLs valid on their own
# no shrinking: every example costs a submission; the first failing document is reported as drawn
GENERATED = settings(max_examples=300, deadline=None, database=None, derandomize=True,
                     phases=(Phase.explicit, Phase.reuse, Phase.generate),
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                            HealthCheck.data_too_large])
# read-back failures caused by known defects: {case: [defect numbers]} (strict xfail until fixed); none today,
# issue 10's defects 1, 2, 7, 8 and 15 being fixed
SLURM_DEFECTS = {}
TORQUE_DEFECTS = {}


def marks(defects):
    return corpus.xfail_for(defects)


def render(doc, scheduler):
    doc = copy.deepcopy(doc)
    doc["job"].setdefault("target", {})["job_scheduler_type"] = scheduler
    return pipeline.optimise(doc, CATALOG), doc


def on_real_jobs(doc, job_ids):
    """The document with every job id of its job_dependency replaced by a real held job's id."""
    doc = copy.deepcopy(doc)
    opts = doc["job"].get("job_options") or {}
    deps = opts.get("job_dependency")
    if deps:
        deps = [deps] if isinstance(deps, str) else deps
        opts["job_dependency"] = [re.sub(r":\d+", ":" + job_ids[0], dep) for dep in deps]
    return doc


def submit_and_read(doc, scheduler, folder, later=None):
    """Render ``doc`` for ``scheduler``, submit it held from ``folder``, return (record, the DSL as rendered).

    The job is cancelled at once, or put on ``later`` (a list the caller cancels in one scancel).
    """
    result, doc = render(doc, scheduler)
    script = folder / result.script.filename
    text = result.script.text
    if scheduler == "torque":
        text = "\n".join(line for line in text.split("\n") if line.strip() not in readback.PBS_UNREADABLE)
    script.write_text(text)
    job = readback.submit_held(str(script), str(folder), torque=scheduler == "torque")
    try:
        return readback.show_job(job), doc
    finally:
        if later is None:
            readback.cancel([job])
        else:
            later.append(job)


def assert_read_back(doc, record, torque=False):
    expected = readback.expect(doc)
    if torque:
        expected = readback.torque_translated(expected)
    assert readback.mismatches(expected, record, record["WorkDir"]) == []


def corpus_cases(defects):
    out = []
    for name, entry in sorted(corpus.MANIFEST.items()):
        if entry["verdict"] == "accepted":
            known = sorted(set(entry.get("defects", [])) | set(defects.get(name, [])))
            out.append(pytest.param(name, id=name, marks=marks(known)))
    return out


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_read_back_by_slurm(held_jobs, tmp_path, example):
    record, doc = submit_and_read(on_real_jobs(load(os.path.join(ROOT, "examples", example)), held_jobs[0]),
                                  "slurm", tmp_path)
    assert_read_back(doc, record)


@pytest.mark.parametrize("name", corpus_cases(SLURM_DEFECTS))
def test_corpus_document_read_back_by_slurm(held_jobs, tmp_path, name):
    record, doc = submit_and_read(on_real_jobs(load(corpus.path(name)), held_jobs[0]), "slurm", tmp_path)
    assert_read_back(doc, record)


# examples Torque cannot start as asked, refused with the path of the field (docs/scheduler.md)
TORQUE_REFUSED = {
    "pytorch-ddp-slurm.yaml": ["job.job_options.node_count"],   # DDP across nodes needs a step on each node
    # the same across nodes, and Torque signals no job before its limit, so it neither requeues there nor reaches a
    # total longer than one job
    "pytorch-requeue-slurm.yaml": ["job.job_options.node_count", "job.resilience.requeue_on[0]",
                                   "job.resilience.signal_lead_time", "job.resilience.total_training_time"],
}


@pytest.mark.parametrize("example,paths", sorted(TORQUE_REFUSED.items()))
def test_example_torque_cannot_start_is_refused(example, paths):
    with pytest.raises(DslInvalid) as info:
        render(load(os.path.join(ROOT, "examples", example)), "torque")
    assert sorted(p.path for p in info.value.problems) == sorted(paths)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e not in TORQUE_REFUSED])
def test_example_torque_script_read_back_through_qsub(held_jobs, tmp_path, example):
    record, doc = submit_and_read(on_real_jobs(load(os.path.join(ROOT, "examples", example)), held_jobs[0]),
                                  "torque", tmp_path)
    assert_read_back(doc, record, torque=True)


def ddp(nodes, ppn=None, gpus=None, launch="auto", threads=1):
    """A data-parallel training document: the ranks and what they need, nothing else."""
    opts = {"job_name": "ddp", "node_count": nodes}
    config = {"ai_framework": "pytorch", "distributed_training": True, "distributed_launch": launch}
    build = {"cpu_type": "x86"}
    if ppn:
        config["processes_per_node"] = ppn
    if gpus:
        opts["request_gpus"], build["acc_type"] = gpus, "nvidia"
    return {"job": {"job_options": opts, "application": {"executable": "python3 train.py", "threads": threads},
                    "target": {"job_scheduler_type": "slurm"},
                    "optimisation": {"app_type": "ai_training", "opt_build": build,
                                     "app_type-ai_training": {"config": config}}}}


@pytest.mark.parametrize("doc", [ddp(2, 2), ddp(1, gpus=4), ddp(2, gpus=4), ddp(3, 2, threads=4),
                                 ddp(2, gpus=4, launch="torchrun"), ddp(2, 4, launch="torchrun", threads=2)],
                         ids=["cpu-2x2", "gpu-1x4", "gpu-2x4", "cpu-3x2-threads", "gpu-torchrun", "cpu-torchrun"])
def test_distributed_training_allocation_read_back_by_slurm(held_jobs, tmp_path, doc):
    """The tasks, CPUs and GPUs per node Slurm allocates are the ranks the launch starts (one per GPU)."""
    record, doc = submit_and_read(doc, "slurm", tmp_path)
    assert_read_back(doc, record)


@pytest.mark.parametrize("name", corpus_cases(TORQUE_DEFECTS))
def test_corpus_torque_script_read_back_through_qsub(held_jobs, tmp_path, name):
    record, doc = submit_and_read(on_real_jobs(load(corpus.path(name)), held_jobs[0]), "torque", tmp_path)
    assert_read_back(doc, record, torque=True)


@pytest.fixture(scope="module")
def held_jobs(slurm, tmp_path_factory):
    """(ids of two real held jobs that documents depend on, a list of jobs to cancel at the end)."""
    folder = tmp_path_factory.mktemp("deps")
    ids = []
    for index in range(2):
        script = folder / ("dep%d.sbatch" % index)
        script.write_text("#!/bin/bash\n#SBATCH --job-name=dep%d\n#SBATCH --output=dep-%%j.out\ntrue\n" % index)
        ids.append(readback.submit_held(str(script), str(folder)))
    later = []
    yield ids, later
    readback.cancel(ids + later)


@given(doc=strategies.documents())
@GENERATED
def test_generated_document_read_back_as_meant(held_jobs, tmp_path_factory, doc):
    doc = strategies.fill_dependencies(doc, held_jobs[0])
    record, doc = submit_and_read(doc, "slurm", tmp_path_factory.mktemp("gen"), later=held_jobs[1])
    assert_read_back(doc, record)


@given(doc=strategies.documents(with_core_count=True))
@settings(GENERATED, max_examples=30)
def test_generated_core_count_read_back_as_meant(held_jobs, tmp_path_factory, doc):
    doc = strategies.fill_dependencies(doc, held_jobs[0])
    record, doc = submit_and_read(doc, "slurm", tmp_path_factory.mktemp("gen"), later=held_jobs[1])
    assert_read_back(doc, record)


def small(opts, acc=None):
    doc = {"job": {"job_options": dict({"job_name": "case"}, **opts), "application": {"executable": "/bin/true"},
                   "target": {"job_scheduler_type": "slurm"}}}
    if acc:
        doc["job"]["optimisation"] = {"app_type": "hpc", "opt_build": {"cpu_type": "x86", "acc_type": acc},
                                      "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                       "parallelisation-mpi": {"library": "openmpi"}}}
    return doc


# requests whose read-back issue 10's defects 1, 7 and 8 got wrong
DEFECT_CASES = [
    pytest.param(small({"core_count": 40, "node_count": 1}), id="core_count"),
    pytest.param(small({"request_gpus": 0}, acc="nvidia"), id="request_gpus-0"),
    pytest.param(small({"combine_stdout_stderr": True, "standard_output_file": "o.txt",
                        "standard_error_file": "e.txt"}), id="combine-with-error-file"),
]


@pytest.mark.parametrize("doc", DEFECT_CASES)
def test_request_read_back_as_meant(slurm, tmp_path, doc):
    record, doc = submit_and_read(doc, "slurm", tmp_path)
    assert_read_back(doc, record)


def test_array_tasks_without_output_file_write_separate_files(slurm, tmp_path):
    record, _doc = submit_and_read(small({"job_array": "0-3"}), "slurm", tmp_path)
    name = os.path.basename(record["StdOut"])        # the array's tasks need a file each: %a (or %A_%a)
    assert "%a" in name or re.search(r"_(\d+)\b", name), name


def test_account_naming_its_partition_and_wait_all_nodes_read_back(held_jobs, tmp_path):
    """Forms multi-node training scripts write: `--account=project@partition` and `--wait-all-nodes=1`; sbatch takes
    them and Slurm keeps the account as written."""
    doc = {"job": {"application": {"executable": "./train"},
                   "job_options": {"job_name": "acct", "node_count": 2, "account": "project@gpu",
                                   "extra_directives": ["--wait-all-nodes=1"]},
                   "target": {"job_scheduler_type": "slurm"}}}
    record, doc = submit_and_read(doc, "slurm", tmp_path)
    assert record["Account"] == "project@gpu"
    assert_read_back(doc, record)
