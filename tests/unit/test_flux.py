"""Flux's batch script form, checked with Flux's own code: the directive parser of the flux-python wheel
(flux/job/directives.py, loaded by its path: ``import flux`` needs Flux's C core) reads modak's script into exactly
modak's options, and every option is one that flux batch declares (read from the wheel's flux/cli sources without
importing them). No Flux instance installs here: submission is tested as argv and parsed answers."""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib.util
import io
import os
import shlex

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobOptions, Settings
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import flux, registry

FLUX = importlib.util.find_spec("flux").submodule_search_locations[0]


def _directives_module():
    spec = importlib.util.spec_from_file_location("flux_directives", os.path.join(FLUX, "job", "directives.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DIRECTIVES = _directives_module()


def batch_options():
    """The option strings of flux batch: its class and the classes it derives from (MiniCmd, BatchAllocCmd)."""
    found = set()
    for source, classes in (("base.py", ("MiniCmd", "BatchAllocCmd")), ("batch.py", ("BatchCmd",))):
        with open(os.path.join(FLUX, "cli", source), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument":
                        found.update(arg.value for arg in call.args
                                     if isinstance(arg, ast.Constant) and str(arg.value).startswith("-"))
    return found


BATCH_OPTIONS = batch_options()

TRAINING = {"job": {
    "job_options": {"job_name": "mnist-train", "wall_time_limit": "02:00:00", "node_count": 1,
                    "core_count_per_process": 8, "queue": "batch", "account": "ai-project",
                    "standard_output_file": "mnist-%j.out", "job_dependency": "afterok:1234567"},
    "application": {"app_type": "ai_training", "executable": "python3 train.py", "arguments": "--epochs 5",
                    "threads": 8},
    "target": {"job_scheduler_type": "flux", "name": "flux-cluster"},
    "optimisation": {"enable_opt_build": True, "app_type": "ai_training",
                     "opt_build": {"cpu_type": "x86"},
                     "app_type-ai_training": {"config": {"ai_framework": "pytorch", "type": "cnn"},
                                              "ai_framework-pytorch": {"version": "2.5"}}}}}
MPI = {"job": {
    "job_options": {"job_name": "stream", "wall_time_limit": "00:30:00", "node_count": 1, "core_count": 16,
                    "node_exclusive": True, "architecture_constraint": "avx2",
                    "extra_directives": ["--urgency=8"]},
    "application": {"executable": "./stream", "mpi_ranks": 16},
    "target": {"job_scheduler_type": "flux"}}}
GPU = {"job": {
    "job_options": {"job_name": "gpu", "node_count": 1, "request_gpus": 4, "process_count_per_node": 4,
                    "core_count": 4, "standard_error_file": "%x-%j.err"},
    "application": {"executable": "./app", "mpi_ranks": 4},
    "target": {"job_scheduler_type": "flux"}}}


def script_of(document, catalog):
    return pipeline.optimise(copy.deepcopy(document), catalog).script.text


def modak_lines(text):
    return [line[len("# flux:"):].strip() for line in text.splitlines() if line.startswith("# flux:")]


@pytest.mark.parametrize("document", [TRAINING, MPI, GPU], ids=["training", "mpi", "gpu"])
def test_flux_reads_exactly_modaks_options_and_knows_each_of_them(document, catalog):
    text = script_of(document, catalog)
    parsed = DIRECTIVES.DirectiveParser(io.StringIO(text)).directives
    assert [d.action for d in parsed] == ["SETARGS"] * len(parsed)
    words = [word for d in parsed for word in d.args]
    assert words == [word for line in modak_lines(text) for word in shlex.split(line)]
    assert words, text
    for word in words:
        assert word.split("=", 1)[0] in BATCH_OPTIONS, word


def test_the_training_script_asks_flux_for_what_the_document_asks(catalog):
    lines = modak_lines(script_of(TRAINING, catalog))
    assert lines == ["--job-name=mnist-train", "--nodes=1", "--nslots=1", "--cores-per-slot=8", "--time-limit=7200s",
                     "--queue=batch", "--bank=ai-project", "--output=mnist-{{id}}.out",
                     "--dependency=afterok:1234567"]


def test_gpus_are_shared_by_the_slots_of_a_node(catalog):
    lines = modak_lines(script_of(GPU, catalog))
    assert "--nslots=4" in lines and "--gpus-per-slot=1" in lines and "--error={{name}}-{{id}}.err" in lines


MINIMAL = Settings(nodes=1, tasks_per_node=None, ranks=1, threads=1, launcher="none", env=())


@pytest.mark.parametrize("options,settings,field", [
    (JobOptions(mem_mb=1000), MINIMAL, "memory_limit"),
    (JobOptions(array="1-4"), MINIMAL, "job_array"),
    (JobOptions(dependency=("singleton",)), MINIMAL, "job_dependency"),
    (JobOptions(stdout="out-%A_%a.txt"), MINIMAL, "standard_output_file"),
    (JobOptions(constraint="avx2&ib"), MINIMAL, "architecture_constraint"),
    (JobOptions(nodes=2), dataclasses.replace(MINIMAL, nodes=2, tasks_per_node=2, ranks=4, launcher="mpiexec"),
     "node_count"),
    (JobOptions(), dataclasses.replace(MINIMAL, tasks_per_node=3, ranks=3, gpus=4), "request_gpus"),
])
def test_what_flux_cannot_express_is_refused_by_its_path(options, settings, field):
    with pytest.raises(DslInvalid) as caught:
        registry.get("flux").preamble(options, settings)
    assert [p.path for p in caught.value.problems] == ["job.job_options." + field]


@pytest.mark.parametrize("directive", ["--output=/etc/x", "--cwd=/root", "--wrap", "-S system.cwd=/", "--conf=x.toml",
                                       "--setattr=system.cwd=/", "--env-file=/etc/shadow", "--add-file=x"])
def test_raw_options_that_name_files_or_change_what_runs_are_refused(directive):
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra
    assert extra.problem("flux", directive) is not None


def test_a_flux_script_is_recognised_and_named_by_its_directives():
    text = "#!/bin/bash\n# flux: --job-name=train\n# flux: --nslots=2\nflux run -n 2 ./app\n"
    assert registry.detect(text) == "flux"
    assert registry.scheduler_class("flux").name_of(text, "/w/job.flux") == "train"


def test_submit_status_and_cancel_argv_and_answers():
    status = ["flux", "jobs", "--no-header", "--format=" + flux.FORMAT, "ƒ2Fd4b2Zj"]
    runner = FakeRunner([(["flux", "batch", "/w/train.flux"], (0, "ƒ2Fd4b2Zj\n", "")),
                         (status, (0, "ƒ2Fd4b2Zj|train|RUN||  |12.5\n", "")),
                         (status, (0, "ƒ2Fd4b2Zj|train|INACTIVE|COMPLETED|0|61.2\n", "")),
                         (status, (0, "ƒ2Fd4b2Zj|train|INACTIVE|TIMEOUT|143|3600.0\n", "")),
                         (["flux", "cancel", "ƒ2Fd4b2Zj"], (0, "", ""))])
    backend = registry.scheduler_class("flux")(runner, chdir="/w", script="/w/train.flux", job_name="train")
    job_id = backend.submit("/w/train.flux")
    running, done, late = backend.status(job_id), backend.status(job_id), backend.status(job_id)
    backend.cancel(job_id)
    assert job_id == "ƒ2Fd4b2Zj"
    assert (running.state, running.active, running.elapsed) == ("RUNNING", True, 12)
    assert (done.state, done.active, done.exit_code) == ("COMPLETED", False, 0)
    assert (late.state, late.exit_code) == ("TIMEOUT", 143)


@pytest.mark.parametrize("sentinel", ["# flux:", "#flux:", "#FLUX:", "##  flux:"])
def test_every_sentinel_form_flux_reads_is_recognised(sentinel):
    """RFC 36: non-word characters, then flux: or FLUX: (Flux's own parser takes them all)."""
    text = "#!/bin/bash\n%s --job-name=train\nflux run ./app\n" % sentinel
    assert [d.args for d in DIRECTIVES.DirectiveParser(io.StringIO(text)).directives] == [["--job-name=train"]]
    assert registry.detect(text) == "flux"
    assert registry.scheduler_class("flux").name_of(text, "/w/job.flux") == "train"


def test_exclusive_nodes_need_a_node_count():
    """flux batch refuses --exclusive without --nodes."""
    with pytest.raises(DslInvalid) as caught:
        registry.get("flux").preamble(JobOptions(exclusive=True),
                                      dataclasses.replace(MINIMAL, nodes_fixed=False, tasks=4, ranks=4))
    assert [p.path for p in caught.value.problems] == ["job.job_options.node_exclusive"]
