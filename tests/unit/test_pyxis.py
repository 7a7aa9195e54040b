"""Pyxis and enroot (container_engine: pyxis): the container enters through srun's own options, on every launch
form; images are squashfs files imported by enroot. Neither installs here: the argv is tested exactly, and every
script passes bash -n and shellcheck."""

from __future__ import annotations

import shlex

import pytest
from helpers import with_
from test_distributed import WRAPPER, ddp_doc, problems, result_of
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import pyxis, registry
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

NGC = "docker://nvcr.io/nvidia/pytorch:24.01-py3"
IMAGE_WORDS = ['--container-image=$IMAGE', "--container-mounts=$PWD:$PWD", "--container-workdir=$PWD"]


@pytest.mark.parametrize("uri,reference", [
    ("docker://nvcr.io/nvidia/pytorch:24.01-py3", "docker://nvcr.io#nvidia/pytorch:24.01-py3"),
    ("docker://localhost:5000/modak/pytorch:2.13.0-cpu", "docker://localhost:5000#modak/pytorch:2.13.0-cpu"),
    ("docker://localhost/x:1", "docker://localhost#x:1"),
    ("docker://pytorch/pytorch:2.5.1", "docker://pytorch/pytorch:2.5.1"),
    ("docker://ubuntu", "docker://ubuntu")])
def test_enroot_names_the_registry_after_a_hash(uri, reference):
    assert pyxis.enroot_reference(uri) == reference


def test_srun_options_mount_the_binds_and_the_job_directory():
    runtime = registry.get("pyxis")
    image = Raw('"$IMAGE"')
    assert runtime.srun_options(image, ("/scratch/data:/data:ro", "/home")) == [
        Raw('--container-image="$IMAGE"'), Raw('--container-mounts=/scratch/data:/data:ro,/home:/home,"$PWD:$PWD"'),
        Raw('--container-workdir="$PWD"')]
    assert runtime.srun_options(image, ("/work",), "/work") == [
        Raw('--container-image="$IMAGE"'), Raw("--container-mounts=/work:/work"), "--container-workdir=/work"]
    assert runtime.exec_argv(image, ["python3", "train.py"], "nvidia", ("/x",)) == ["python3", "train.py"]
    assert runtime.pull_argv("out.sqsh", NGC) == [
        "enroot", "import", "--output", "out.sqsh", "docker://nvcr.io#nvidia/pytorch:24.01-py3"]


def pyxis_doc(doc, image=NGC):
    doc = with_(doc, "job.target.container_engine", "pyxis")
    return with_(doc, "job.application.container_runtime", image)


def run_words(result):
    line = [line for line in result.script.body if line.startswith("srun ")]
    assert len(line) == 1, result.script.text
    return shlex.split(line[0])


def test_distributed_training_one_task_per_rank_in_the_ngc_image(tmp_path):
    result = result_of(pyxis_doc(ddp_doc(acc="nvidia", gpus=4, ppn=None)), ImageCatalog([]))
    assert run_words(result) == ["srun"] + IMAGE_WORDS + [
        "--nodes=2", "--ntasks=8", "--ntasks-per-node=4", "bash", "-c", WRAPPER, "modak-rank",
        "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]
    body = result.script.body
    assert any(line.startswith('IMAGE="$MODAK_IMAGE_DIR/pytorch_24.01-py3-') and line.endswith('.sqsh"')
               for line in body)
    assert "--nv" not in result.script.text        # enroot's hook gives the container the job's GPUs
    lint(result.script.text, tmp_path)


def test_one_launcher_per_node_in_the_image():
    result = result_of(pyxis_doc(ddp_doc(distributed_launch="accelerate")), ImageCatalog([]))
    words = run_words(result)
    assert words[:8] == ["srun"] + IMAGE_WORDS + ["--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                                                  "--cpus-per-task=2"]
    assert words[words.index("python3"):words.index("python3") + 3] == ["python3", "-m", "accelerate.commands.launch"]


def test_a_job_without_srun_gets_one_task_in_the_container(tmp_path):
    doc = {"job": {"application": {"executable": "python3 train.py"}, "job_options": {"job_name": "one"},
                   "target": {"job_scheduler_type": "slurm"}}}
    result = result_of(pyxis_doc(doc), ImageCatalog([]))
    assert run_words(result) == ["srun", "--nodes=1", "--ntasks=1"] + IMAGE_WORDS + ["python3", "train.py"]
    lint(result.script.text, tmp_path)


def test_the_users_own_squashfs_file_runs_as_it_is():
    doc = {"job": {"application": {"executable": "python3 train.py", "container_runtime": "/images/train.sqsh"},
                   "job_options": {"job_name": "own"},
                   "target": {"job_scheduler_type": "slurm", "container_engine": "pyxis"}}}
    result = result_of(doc, ImageCatalog([]))
    assert "IMAGE=/images/train.sqsh" in result.script.body and "enroot import" not in result.script.text


@pytest.mark.parametrize("scheduler", ["pbspro", "gridengine", "local", "flux"])
def test_pyxis_needs_slurm(scheduler):
    doc = {"job": {"application": {"executable": "./app", "container_runtime": NGC},
                   "job_options": {"job_name": "x"},
                   "target": {"job_scheduler_type": scheduler, "container_engine": "pyxis"}}}
    assert "job.target.container_engine" in problems(doc)


@pytest.mark.parametrize("engine,image", [("apptainer", "/images/train.sqsh"), ("pyxis", "/images/train.sif")])
def test_an_image_file_of_another_engine_is_refused_by_path(engine, image):
    doc = {"job": {"application": {"executable": "./app", "container_runtime": image},
                   "job_options": {"job_name": "x"},
                   "target": {"job_scheduler_type": "slurm", "container_engine": engine}}}
    assert list(problems(doc)) == ["job.application.container_runtime"]


def test_apptainer_gives_amd_gpus_with_rocm():
    assert registry.get("apptainer").exec_argv(Raw('"$IMAGE"'), ["python3", "t.py"], "amd") == [
        "apptainer", "exec", "--rocm", Raw('"$IMAGE"'), "python3", "t.py"]
