"""Training in the user's own environment: `container_runtime: ""` runs no container whatever image fits (modak's
choice becomes advice), and each rank's threads are its CPUs when the job runs unless the DSL says them."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers import with_
from test_distributed import CONFIG, ddp_doc, problems, result_of

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

FRAMEWORK = "job.optimisation.app_type-ai_training.ai_framework-pytorch"


def no_container(**kwargs):
    """A CPU data-parallel training on 2 nodes that names no image and asks for an optimised build (a catalog image
    or recipe fits it), with no container."""
    doc = with_(ddp_doc(**kwargs), "job.application.container_runtime", "")
    doc = with_(doc, "job.optimisation.enable_opt_build", True)
    return with_(doc, FRAMEWORK, {"version": "2.13.0"})


def threads_line(result):
    lines = [line for line in result.script.body if line.startswith("OMP_NUM_THREADS=")
             or line.startswith("export OMP_NUM_THREADS=")]
    assert len(lines) == 1, result.script.text
    return lines[0].split("=", 1)[1]


def test_no_container_means_no_container_for_a_distributed_training(catalog):
    fitting = result_of(with_(no_container(), "job.application.container_runtime", None), catalog)
    assert fitting.choice.uri, "an image fits this request when the container is left to modak"
    result = result_of(no_container(), catalog)
    assert result.choice.uri is None and result.choice.source == "bare"
    for word in ("ch-run", "apptainer", "podman", "IMAGE="):
        assert word not in result.script.text
    assert "image: none (bare run)" in result.script.text
    assert result.settings.distributed is not None and result.settings.ranks == 4
    assert "advice: with a container, modak would run it in %s (%s)" % (fitting.choice.uri, fitting.choice.source) \
        in result.explanation


def test_no_container_keeps_the_users_setup_lines(catalog):
    doc = with_(no_container(), "job.target.setup", ["source ~/venvs/train/bin/activate"])
    text = result_of(doc, catalog).script.text
    assert "eval 'source ~/venvs/train/bin/activate'" in text


@pytest.mark.parametrize("launch,word", [
    ("srun", '"${SLURM_CPUS_PER_TASK:-$(( ${SLURM_CPUS_ON_NODE:-2} >= 2 ? ${SLURM_CPUS_ON_NODE:-2} / 2 : 1 ))}"'),
    ("torchrun", '"$(( ${SLURM_CPUS_ON_NODE:-2} >= 2 ? ${SLURM_CPUS_ON_NODE:-2} / 2 : 1 ))"')])
def test_threads_left_open_are_the_ranks_cpus_at_run_time(catalog, launch, word):
    doc = with_(no_container(), CONFIG + ".distributed_launch", launch)
    result = result_of(doc, catalog)
    assert threads_line(result) == word
    assert "export OMP_NUM_THREADS" in result.script.body


def test_threads_the_dsl_sets_are_kept(catalog):
    result = result_of(with_(no_container(), "job.application.threads", 3), catalog)
    assert threads_line(result) == "3"


@pytest.mark.parametrize("launch", ["srun", "torchrun", "accelerate", "deepspeed"])
def test_threads_unset_leave_omp_num_threads_to_the_launcher(catalog, launch):
    """threads: unset, as published launch scripts leave it: no OMP_NUM_THREADS anywhere in the script."""
    doc = with_(with_(no_container(), CONFIG + ".distributed_launch", launch), "job.application.threads", "unset")
    result = result_of(doc, catalog)
    assert "OMP_NUM_THREADS" not in result.script.text
    assert result.settings.distributed.world_size == 4


@pytest.mark.parametrize("value", ["none", 0, "4", True])
def test_threads_take_a_count_or_unset_only(value):
    doc = with_(no_container(), "job.application.threads", value)
    with pytest.raises(DslInvalid) as info:
        dsl.parse(doc)
    assert [p.path for p in info.value.problems] == ["job.application.threads"]


def _evaluate(word, env):
    done = subprocess.run(["bash", "-c", "printf %s " + word], env=dict(env, PATH=os.environ["PATH"]),
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("scheduler,args,env,expected", [
    ("slurm", (2, 4, True), {"SLURM_CPUS_ON_NODE": "16"}, "8"),
    ("slurm", (2, 4, True), {"SLURM_CPUS_ON_NODE": "32", "SLURM_CPUS_PER_TASK": "10"}, "10"),
    ("slurm", (2, 4, False), {"SLURM_CPUS_ON_NODE": "20", "SLURM_CPUS_PER_TASK": "20"}, "10"),
    ("slurm", (4, 4, True), {"SLURM_CPUS_ON_NODE": "2"}, "1"),
    ("pbspro", (4, 8, True), {"NCPUS": "64"}, "16"),
    ("torque", (2, 2, True), {"PBS_NUM_PPN": "8"}, "4"),
    ("gridengine", (2, 4, True), {"NSLOTS": "16"}, "4"),
    ("slurm", (1, 1, True), {}, "1")])
def test_the_run_time_word_is_what_bash_computes(scheduler, args, env, expected):
    assert _evaluate(registry.scheduler_class(scheduler).rank_cpus(*args), env) == expected


def test_without_a_scheduler_variable_the_node_cpus_are_shared():
    word = registry.scheduler_class("local").rank_cpus(1)
    assert _evaluate(word, {}) == str(len(os.sched_getaffinity(0)))


# -- environment_expanded: values that name other variables, expanded when the job runs (the only expansion) ------

def _expanded_job(values, **app):
    return {"job": {"application": dict({"executable": "./a", "environment_expanded": values}, **app),
                    "job_options": {"job_name": "e"}, "target": {"job_scheduler_type": "slurm"}}}


def test_expanded_values_name_variables_and_nothing_else_runs():
    values = {"A": "${SITE_IFNAME}", "B": "a;rm", "C": "x${HOME}y", "D": "'$HOME'", "E": "`id`",
              "F": "\"$HOME $SITE_IFNAME\"", "G": "${SITE_IFNAME:-x}", "H": "$(id)"}
    body = pipeline.optimise(_expanded_job(values), ImageCatalog([])).script.body
    lines = [line for line in body if line[:2] in ("%s=" % k for k in values)]
    assert lines[0] == 'A="${SITE_IFNAME}"' and "export A" in body
    shown = subprocess.run(["bash", "-c", "\n".join(lines) + '\nprintf "%s|" "$A" "$B" "$C" "$D" "$E" "$F" "$G" "$H"'],
                           env={"HOME": "/h", "SITE_IFNAME": "ib0", "PATH": os.environ["PATH"]}, capture_output=True,
                           text=True, check=True).stdout
    assert shown == "ib0|a;rm|x/hy|$HOME|`id`|/h ib0|${SITE_IFNAME:-x}|$(id)|"


@pytest.mark.parametrize("values,extra,path", [
    ({"Y": "a b"}, {}, "job.application.environment_expanded.Y"),
    ({"Y": "'open"}, {}, "job.application.environment_expanded.Y"),
    ({"Y": "$HOME"}, {"environment": {"Y": "1"}}, "job.application.environment_expanded.Y"),
    ({"BASH_VERSINFO": "$HOME"}, {}, "job.application.environment_expanded.BASH_VERSINFO")])
def test_expanded_values_are_one_word_of_a_name_set_once(values, extra, path):
    with pytest.raises(DslInvalid) as info:
        dsl.parse(_expanded_job(values, **extra))
    assert [p.path for p in info.value.problems] == [path]


def test_rendezvous_names_are_refused_in_expanded_values_too():
    doc = with_(ddp_doc(), "job.application.environment_expanded", {"MASTER_ADDR": "$HOSTNAME"})
    assert list(problems(doc)) == ["job.application.environment_expanded.MASTER_ADDR"]
