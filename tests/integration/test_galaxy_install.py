"""The collection as a user meets it: built with ansible-galaxy, installed from the tarball into a temporary path,
and every playbook and role run from a separate project directory with no ansible.cfg.

The tarball is built once per run (the session fixture ``installed`` of conftest.py, galaxy_build.py) from a copy
of this working tree with run leftovers planted in it (results databases, .hypothesis/, tosca/.opera/, out/,
__pycache__): none may reach the tarball.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml
from galaxy_build import BIN, LEFTOVERS
from galaxy_build import env as _env

HELLO = {"job": {"job_options": {"job_name": "hello-installed"},
                 "application": {"executable": "/bin/echo", "arguments": "hello from the installed collection"},
                 "target": {"job_scheduler_type": "local"}}}


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path


def playbook(installed, project, name, extra=None, check=False):
    argv = [os.path.join(BIN, "ansible-playbook"), name, "-e", "ansible_python_interpreter=%s" % sys.executable]
    if extra:
        argv += ["-e", json.dumps(extra)]
    if check:
        argv.append("--check")
    done = subprocess.run(argv, cwd=str(project), env=_env(project, installed[1]), capture_output=True, text=True,
                          check=False, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    assert not os.path.exists(os.path.join(project, "ansible.cfg"))
    return done


def _written_into(root):
    """Files of the installed collection that are not in its FILES.json (written after install)."""
    with open(os.path.join(root, "FILES.json"), encoding="utf-8") as handle:
        known = set(entry["name"] for entry in json.load(handle)["files"])
    found = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            rel = os.path.relpath(os.path.join(top, name), root)
            if rel not in known and rel not in ("MANIFEST.json", "FILES.json"):
                found.add(rel)
    return found


def test_the_tarball_leaves_run_leftovers_out(installed):
    with tarfile.open(installed[0]) as tar:
        names = tar.getnames()
    assert "galaxy.yml" not in names and "MANIFEST.json" in names and "catalog/images.yaml" in names
    for rel in LEFTOVERS:
        assert rel not in names
    assert not [n for n in names if n.endswith((".sqlite", ".pyc")) or "/.opera" in n or n.startswith(
        (".hypothesis", "out/", "tests/output", ".venv", "collections/", ".git/", ".pytest_cache"))]


def test_the_optimise_playbook_writes_into_the_project(installed, project):
    playbook(installed, project, "sodalite.modak.optimise")
    assert (project / "out" / "mnist-train.sbatch").is_file()
    assert _written_into(installed[2]) == set()


def test_the_deploy_playbook_and_optimised_job_role_run_a_job(installed, project):
    dsl_file = project / "hello.yaml"
    dsl_file.write_text(yaml.safe_dump(HELLO))
    done = playbook(installed, project, "sodalite.modak.deploy",
                    {"dsl_file": str(dsl_file), "optimised_job_work_dir": str(project / "work"),
                     "optimised_job_poll_interval": 1})
    assert "COMPLETED" in done.stdout
    assert (project / "work" / "hello-installed.sh").is_file()
    assert not (project / "out" / "hello-installed.sh").exists()       # placed once, on the target only
    fetched = list((project / "out" / "results" / "localhost").iterdir())
    assert any("hello from the installed collection" in p.read_text() for p in fetched)
    assert _written_into(installed[2]) == set()


@pytest.mark.usefixtures("torch_installed")
def test_the_benchmark_playbook_and_role_fill_a_store_in_the_project(installed, project):
    done = playbook(installed, project, "sodalite.modak.benchmark",
                    {"benchmark_reps": 2, "benchmark_steps": 1, "benchmark_warmup": 0, "benchmark_report_dir": "",
                     "benchmark_configs": [{"threads": 1}]})
    assert "round 1 of 2: 1 run(s)" in done.stdout and "round 2 of 2: 1 run(s)" in done.stdout   # progress
    assert (project / "benchmarks" / "results" / "bench.sqlite").is_file()
    assert (project / "out" / "benchmark" / "configs.json").is_file()
    assert _written_into(installed[2]) == set()


@pytest.mark.usefixtures("torch_installed")
def test_the_autotune_playbook_tunes_from_the_project(installed, project):
    dsl_file = os.path.join(installed[2], "examples", "pytorch-mnist-tuning-local.yaml")
    playbook(installed, project, "sodalite.modak.autotune",
             {"dsl_file": dsl_file, "autotune_max_runs": 2, "autotune_extra_args": ["--steps", "1", "--warmup", "0"],
              "app_python": sys.executable})
    assert (project / "benchmarks" / "results" / "autotune.sqlite").is_file()
    assert len(list((project / "out").iterdir())) == 1
    assert _written_into(installed[2]) == set()


def test_the_container_build_role_writes_a_build_job_in_the_project(installed, project):
    book = project / "build.yml"
    book.write_text(yaml.safe_dump([{
        "name": "Build", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "roles": [{"role": "sodalite.modak.container_build",
                   "container_build_dsl_file": os.path.join(installed[2], "examples", "pytorch-cpu-slurm.yaml"),
                   "container_build_output_dir": str(project / "recipes"), "container_build_where": "slurm"}]}]))
    playbook(installed, project, str(book))
    assert len(list((project / "recipes").glob("modak-build-*.sbatch"))) == 1
    assert (project / "recipes" / "Singularity.def").is_file()


def test_the_modak_command_runs_from_the_installed_copy(installed, project):
    done = subprocess.run([os.path.join(installed[2], "bin", "modak"), "optimise", "-o", "jobs",
                           os.path.join(installed[2], "examples", "pytorch-cpu-slurm.yaml")],
                          cwd=str(project), env=_env(project), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (project / "jobs" / "mnist-train.sbatch").is_file()


def _files(root):
    return sorted(os.path.relpath(os.path.join(top, name), root) for top, _d, names in os.walk(root) for name in names)


def test_check_mode_on_a_first_deploy_writes_nothing(installed, project):
    dsl_file = project / "hello.yaml"
    dsl_file.write_text(yaml.safe_dump(HELLO))
    done = playbook(installed, project, "sodalite.modak.deploy",
                    {"dsl_file": str(dsl_file), "optimised_job_work_dir": str(project / "work")}, check=True)
    assert "Say what check mode would submit" in done.stdout and "failed=0" in done.stdout
    assert _files(project) == ["hello.yaml"]


def test_check_mode_on_a_first_container_build_writes_nothing(installed, project):
    book = project / "build.yml"
    book.write_text(yaml.safe_dump([{
        "name": "Build", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "roles": [{"role": "sodalite.modak.container_build", "container_build_engine": "podman",
                   "container_build_dsl_file": os.path.join(installed[2], "examples", "pytorch-cpu-slurm.yaml"),
                   "container_build_output_dir": str(project / "recipes")}]}]))
    done = playbook(installed, project, str(book), check=True)
    assert "check mode: would build localhost/modak/" in done.stdout
    assert _files(project) == ["build.yml"]


def test_relative_paths_on_the_command_line_are_the_projects(installed, project):
    """-e dsl_file=job.yaml -e output_dir=jobs from the project directory: both are the project's."""
    shutil.copy(os.path.join(installed[2], "examples", "pytorch-cpu-slurm.yaml"), project / "job.yaml")
    (project / "dsl").mkdir()
    (project / "dsl" / "hello.yaml").write_text(yaml.safe_dump(HELLO))
    playbook(installed, project, "sodalite.modak.optimise", {"dsl_file": "job.yaml", "output_dir": "jobs"})
    assert (project / "jobs" / "mnist-train.sbatch").is_file()
    done = playbook(installed, project, "sodalite.modak.deploy",
                    {"dsl_file": "dsl/hello.yaml", "optimised_job_work_dir": str(project / "work"),
                     "optimised_job_output_dir": "deployed", "optimised_job_poll_interval": 1})
    assert "COMPLETED" in done.stdout and (project / "work" / "hello-installed.sh").is_file()
    assert any("hello from the installed collection" in p.read_text()
               for p in (project / "deployed" / "results" / "localhost").iterdir())
    assert _written_into(installed[2]) == set()


def test_a_relative_work_directory_is_refused_before_submission(installed, project):
    (project / "hello.yaml").write_text(yaml.safe_dump(HELLO))
    argv = [os.path.join(BIN, "ansible-playbook"), "sodalite.modak.deploy", "-e",
            "ansible_python_interpreter=%s" % sys.executable, "-e",
            json.dumps({"dsl_file": "hello.yaml", "optimised_job_work_dir": "work"})]
    done = subprocess.run(argv, cwd=str(project), env=_env(project, installed[1]), capture_output=True, text=True,
                          check=False, timeout=600)
    assert done.returncode != 0 and "is relative: give an absolute path or one under ~" in done.stdout, done.stdout
    assert not (project / "work").exists()


def test_the_benchmark_check_mode_passes_on_a_first_run_and_writes_nothing(installed, project):
    done = playbook(installed, project, "sodalite.modak.benchmark", {"benchmark_reps": 1}, check=True)
    assert "check mode: would run the configurations" in done.stdout
    assert _files(project) == []
