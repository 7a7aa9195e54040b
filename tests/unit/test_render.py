"""Job scripts: run lines, containers, quoting; every example's script passes bash -n and shellcheck."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from helpers import EXAMPLES, ORIGINAL, ROOT, SITE_IMAGES, ai_doc, load, with_

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names

SHELLCHECK = shutil.which("shellcheck") or os.path.join(ROOT, ".venv", "bin", "shellcheck")


def script_of(doc, catalog):
    return pipeline.optimise(doc, catalog).script.text


def lint(text, tmp_path, name="job.sh"):
    path = tmp_path / name
    path.write_text(text)
    subprocess.run(["bash", "-n", str(path)], check=True)
    result = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("path", EXAMPLES + ORIGINAL, ids=lambda p: p.rsplit("/", 1)[-1])
def test_every_example_script_passes_bash_n_and_shellcheck(path, catalog, tmp_path):
    result = pipeline.optimise(load(path), catalog)
    lint(result.script.text, tmp_path, result.script.filename)
    assert result.script.text.startswith("#!/bin/bash\n")


@pytest.mark.parametrize("scheduler", ["slurm", "pbspro", "torque", "local"])
def test_every_scheduler_script_lints(scheduler, catalog, tmp_path):
    doc = with_(ai_doc("tensorflow", "2.1", acc="nvidia", xla=True), "job.target.job_scheduler_type", scheduler)
    lint(script_of(doc, catalog), tmp_path)


def test_original_egi_job_fixed(catalog):
    result = pipeline.optimise(load([p for p in ORIGINAL if p.endswith("mpi_test_egi.json")][0]), catalog)
    text = result.script.text
    assert "#SBATCH --error=mpi_test.err" in text           # the original wrote '-error='
    assert "#SBATCH --time=01:00:00" in text
    assert 'IMAGE="$MODAK_IMAGE_DIR/openmpi_3.1.3-fb6ff9ce34389385.sif"' in text
    assert "srun --mpi=pmix --ntasks=80 --cpus-per-task=2 apptainer exec --nv \"$IMAGE\" ./xthi" in text
    assert "apptainer exec --nv \"$IMAGE\" bash -c 'mpicc -o xthi -fopenmp Xthi.c'" in text
    assert "--no-check-certificate" not in text
    assert text.count("mpicc") == 1                          # built once, not again under the launcher
    assert "export OMP_NUM_THREADS=2" in text
    assert any("tasks per node raised to 40" in e for e in result.explanation)


def test_tf_xla_on_torque(catalog):
    text = script_of(load(os.path.join(ROOT, "examples", "tensorflow-xla-gpu-torque.json")), catalog)
    assert "#PBS -l nodes=1:ppn=10:gpus=1" in text
    assert "export TF_XLA_FLAGS='--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit'" in text
    assert 'cd "${PBS_O_WORKDIR:-$PWD}"' in text
    assert "apptainer exec --nv --bind /scratch/imagenet \"$IMAGE\" ./resnet_benchmark.sh" in text


def test_user_container_local_run_quotes_arguments(catalog):
    text = script_of(load(os.path.join(ROOT, "examples", "own-container-local.yaml")), catalog)
    assert "exec >my-analysis.out 2>&1" in text
    assert ("timeout --signal=TERM --kill-after=30 600s apptainer exec \"$IMAGE\" python3 /opt/app/analyse.py "
            "--input '/data/run 1.csv' --verbose") in text
    assert "export ANALYSIS_MODE=fast" in text


def test_bare_run_without_container(catalog):
    doc = {"job": {"application": {"executable": "./a.out", "arguments": "x y"},
                   "target": {"job_scheduler_type": "slurm"}}}
    text = script_of(doc, catalog)
    assert "apptainer" not in text and "IMAGE" not in text
    assert text.rstrip().endswith("./a.out x y")


def test_runscript_when_no_executable(catalog):
    doc = {"job": {"application": {"container_runtime": "image.sif"}, "target": {"job_scheduler_type": "slurm"}}}
    text = script_of(doc, catalog)
    assert "IMAGE=image.sif" in text and text.rstrip().endswith('apptainer run "$IMAGE"')


def test_singularity_engine_and_image_dir(catalog):
    doc = with_(ai_doc("tensorflow", "2.1"), "job.target.container_engine", "singularity")
    doc = with_(doc, "job.target.image_dir", "/shared/sif")
    text = script_of(with_(doc, "job.target.image_fetch", "job"), catalog)
    assert "MODAK_IMAGE_DIR=/shared/sif" in text
    assert "singularity pull --force" in text and "singularity exec" in text and "apptainer" not in text


def test_a_registry_image_is_staged_by_default_and_the_job_only_checks_it(catalog):
    doc = with_(ai_doc("tensorflow", "2.1"), "job.target.image_dir", "/shared/sif")
    result = pipeline.optimise(doc, catalog)
    text, stage = result.script.text, result.extra["stage"]
    assert "apptainer pull" not in text and "mkdir" not in text
    assert 'if ! [ -s "$IMAGE" ]; then' in text and "exit 1" in text and "target.image_fetch: job" in text
    assert "MODAK_IMAGE_DIR=/shared/sif" in stage and "apptainer pull --force" in stage
    assert stage.count('IMAGE="$MODAK_IMAGE_DIR/') == 3 and text.count('IMAGE="$MODAK_IMAGE_DIR/') == 1
    job = pipeline.optimise(with_(doc, "job.target.image_fetch", "job"), catalog)
    assert job.extra["stage"] is None and "apptainer pull --force" in job.script.text


def test_launchers(catalog):
    base = {"job": {"application": {"executable": "./m", "mpi_ranks": 4, "app_type": "mpi"},
                    "target": {"job_scheduler_type": "torque"}}}
    assert 'mpirun -machinefile "$PBS_NODEFILE" -np 4 ./m' in script_of(base, catalog)
    assert 'mpiexec -machinefile "$PBS_NODEFILE" -n 4 ./m' in script_of(with_(base, "job.application.launcher",
                                                                              "mpiexec"), catalog)
    assert "srun --ntasks=4 ./m" in script_of(with_(base, "job.target.job_scheduler_type", "slurm"), catalog)
    single = {"job": {"application": {"executable": "./s"}, "target": {"job_scheduler_type": "slurm"}}}
    assert script_of(single, catalog).rstrip().endswith("\n./s")


def test_modules_environment_and_workdir(catalog):
    doc = {"job": {"application": {"executable": "./m", "modules": ["gcc/12", "openmpi"],
                                   "environment": {"X": "a b", "N": 3, "OMP_NUM_THREADS": "9"},
                                   "working_directory": "/scratch/run"},
                   "target": {"job_scheduler_type": "slurm"}}}
    text = script_of(doc, catalog)
    assert "module load gcc/12 openmpi" in text
    assert "export X='a b'" in text and "export N=3" in text
    assert text.count("OMP_NUM_THREADS") == 1 and "export OMP_NUM_THREADS=9" in text
    assert "cd /scratch/run" in text and "SLURM_SUBMIT_DIR" not in text


def test_build_parallelism_is_replaced_without_templates(catalog):
    doc = {"job": {"application": {"executable": "./x", "build": {
        "src": "https://example.org/src.git", "build_command": "make -j{{BUILD_PARALLELISM}} {{ 7*7 }}",
        "build_parallelism": 6}}, "target": {"job_scheduler_type": "slurm"}}}
    text = script_of(doc, catalog)
    assert "if [ ! -d src ]; then git clone --depth 1 -- https://example.org/src.git src; fi" in text
    assert "bash -c 'make -j6 {{ 7*7 }}'" in text and "49" not in text


def sif_name(uri):
    """docker://ethcscs/openmpi:3.1.3 -> openmpi_3.1.3-<digest of the whole reference>.sif (never shared): the file
    apptainer's run lines pull a registry image into."""
    return names.cache_name(uri, ".sif")


@pytest.mark.parametrize("uri,name", [("docker://ethcscs/openmpi:3.1.3", "openmpi_3.1.3-fb6ff9ce34389385.sif"),
                                      ("library://code_aster_14.4.0_mpich_avx2",
                                       "code_aster_14.4.0_mpich_avx2-58bcb494b5ef5628.sif"),
                                      ("docker://r/x@sha256:ab", "x_sha256_ab-348d8b073337a704.sif"),
                                      ("oras://reg/ns/img.sif", "img-ff1335d82085bdfc.sif")])
def test_sif_names(uri, name):
    assert sif_name(uri) == name


def test_sif_names_of_different_references_never_collide():
    """Before: both were pytorch_2.5.sif, so one DSL could swap the image later jobs of the other ran."""
    assert sif_name("docker://a.example/x/pytorch:2.5") != sif_name("docker://pytorch/pytorch:2.5")
    assert sif_name("docker://a.example/x/pytorch:2.5").startswith("pytorch_2.5-")


HOSTILE = ["$(touch pwned)", "`touch pwned`", "; touch pwned", "' ; touch pwned; '", '" ; touch pwned; "',
           "&& touch pwned", "| touch pwned", "> pwned", "$HOME", "\\", "*", "{{ 7*7 }}", "#SBATCH --wrap=x"]


def test_hostile_arguments_stay_data_when_the_script_runs(catalog, tmp_path):
    """Run the generated script with a stub program: every hostile word arrives as one literal argument."""
    stub = tmp_path / "show"
    stub.write_text("#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n")
    stub.chmod(0o755)
    doc = {"job": {"job_options": {"standard_output_file": "out.txt"},
                   "application": {"executable": str(stub), "arguments": HOSTILE,
                                   "environment": {"HOSTILE": "$(touch pwned2)"}},
                   "target": {"job_scheduler_type": "local"}}}
    text = script_of(doc, catalog)
    lint(text, tmp_path)
    script = tmp_path / "job.sh"
    subprocess.run(["bash", str(script)], cwd=str(tmp_path), check=True)
    assert (tmp_path / "out.txt").read_text().splitlines() == HOSTILE
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


SITE = ImageCatalog.from_data(SITE_IMAGES)


def test_oras_images_are_pulled_and_local_sif_used_in_place():
    catalog = SITE
    doc = {"job": {"application": {"executable": "./m", "app_tag": "lammps", "mpi_ranks": 2},
                   "target": {"job_scheduler_type": "slurm"},
                   "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v3"},
                                    "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                     "parallelisation-mpi": {"version": "4.1"}}}}}
    text = script_of(doc, catalog)
    assert "IMAGE=/apps/containers/lammps_openmpi.sif" in text and "pull" not in text
    doc = with_(doc, "job.application.app_tag", None)
    doc = with_(doc, "job.optimisation.opt_build.cpu_isa", "x86-64-v4")
    text = script_of(with_(doc, "job.target.image_fetch", "job"), catalog)
    assert ("apptainer pull --force \"$IMAGE.part.$$\" oras://ghcr.io/example/modak-sif:openmpi-4.1.6-x86-64-v4"
            in text)
