"""MPI across nodes, for real: modak writes the job script from a DSL (through ansible-playbook and the optimise
module), the script is submitted unchanged with sbatch to the multi-node cluster (MpiDefault=none), and a
program that allreduces its ranks prints 4 ranks on 2 nodes and the right sum, with Open MPI and with MPICH:
bare, and inside Podman and Charliecloud images built from modak's recipes (one image per MPI library, built
on the mmdebstrap Debian base of scripts/base-image and kept between runs).

The images are placed where modak's scripts look for them: Podman's storage under the catalog's reference,
and for Charliecloud the converted directory in target.image_dir under the name the script gives it, so no
registry is needed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest
import services
import yaml

from helpers import spec_of

from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names

from .conftest import HERE, SHARED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PLAYBOOK = os.path.join(ROOT, "tests", "integration", "playbooks", "optimise_task.yml")
SOURCE = os.path.join(HERE, "data", "allreduce.c")
MPICC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
PMI = {"openmpi": "pmix", "mpich": "pmi2"}
IMAGES = os.path.join(SHARED, "images")          # Charliecloud image directories, kept between runs
RECIPES = os.path.join(SHARED, "recipes")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"   # Debian's ch-image, not the venv's


def run(argv, timeout=900, **kw):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, **kw)
    assert proc.returncode == 0, "%s failed (rc %d):\n%s\n%s" % (
        " ".join(argv), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def compile_program(library, workdir):
    binary = os.path.join(workdir, "allreduce-%s" % library)
    run([MPICC[library], "-O2", "-o", binary, SOURCE])
    return os.path.basename(binary)


def mpi_doc(library, name, engine=None):
    """2 nodes x 2 ranks of the allreduce program; bare (application.mpi_library) or in a modak image."""
    job = {"job_options": {"job_name": name, "node_count": 2, "process_count_per_node": 2,
                           "partition": "multinode", "wall_time_limit": "00:05:00"},
           "application": {"app_type": "mpi", "executable": "./allreduce-%s" % library, "mpi_ranks": 4},
           "target": {"job_scheduler_type": "slurm"}}
    if engine is None:
        job["application"]["mpi_library"] = library
    else:
        job["target"].update(container_engine=engine, image_dir=IMAGES)
        job["optimisation"] = {"app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                               "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                "parallelisation-mpi": {"library": library}}}
    return {"job": job}


def optimise(doc, workdir, catalog=None):
    """The job script modak writes, through ansible-playbook and the optimise module."""
    out = os.path.join(workdir, "out")
    result_file = os.path.join(workdir, "result.json")
    extra = {"dsl": doc, "output_dir": out, "result_file": result_file}
    if catalog:
        extra["catalog"] = catalog
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), PLAYBOOK, "-e", json.dumps(extra)], env=env,
        cwd=ROOT, timeout=300)
    with open(result_file) as handle:
        return json.load(handle)


def submit_and_wait(cluster, script, workdir, timeout=300):
    """sbatch the script as written; (final state, output lines)."""
    proc = cluster.run(["sbatch", "--parsable", script], cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip().split(";")[0]
    deadline = time.monotonic() + timeout
    state, fields = "", ""
    while time.monotonic() < deadline:
        fields = cluster.run(["scontrol", "show", "job", job_id]).stdout
        match = re.search(r"JobState=(\S+)", fields)
        state = match.group(1) if match else ""
        if state and state not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
            break
        time.sleep(0.5)
    path = re.search(r"StdOut=(\S+)", fields).group(1)
    with open(path) as handle:
        return state, handle.read().splitlines()


def assert_four_ranks_on_two_nodes(lines):
    ranks = sorted(line for line in lines if line.startswith("rank "))
    assert [re.sub(r" on \S+$", "", line) for line in ranks] == ["rank %d of 4" % r for r in range(4)], lines
    nodes = {line.rsplit(" ", 1)[1] for line in ranks}
    assert len(nodes) == 2 and nodes <= {"mn1", "mn2", "mn3"}, lines
    assert "sum 6" in lines, lines


@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_bare_mpi_job_runs_across_two_nodes(library, multinode, shared_dir):
    program = compile_program(library, shared_dir)
    result = optimise(mpi_doc(library, "mpi-bare-%s" % library), shared_dir)
    assert result["settings"]["pmi"] == PMI[library]
    text = result["job_script_content"]
    assert "srun --mpi=%s --ntasks=4 ./%s" % (PMI[library], program) in text
    state, lines = submit_and_wait(multinode, result["job_script"], shared_dir)
    assert state == "COMPLETED", "\n".join([text] + lines)
    assert_four_ranks_on_two_nodes(lines)


def test_without_the_pmi_mpich_runs_each_rank_alone(multinode, shared_dir):
    """What the --mpi= flag prevents: under MpiDefault=none, MPICH's ranks do not find each other."""
    program = compile_program("mpich", shared_dir)
    proc = multinode.run(["srun", "--nodes=2", "--ntasks-per-node=2", "./" + program], cwd=shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert sorted(set(re.sub(r" on \S+$", "", l) for l in proc.stdout.splitlines() if l.startswith("rank"))) \
        == ["rank 0 of 1"]


@pytest.fixture(scope="session")
def mpi_images(multinode):
    """For each MPI library: the modak recipe built with podman and with ch-image on the Debian base; the
    catalog file that names them (written from the recipes' catalog entries)."""
    services.podman_settings()
    env = dict(os.environ, PATH=SYSTEM_PATH, USER="root")
    base = re.search(r"^name=(\S+)$", run([os.path.join(ROOT, "scripts", "base-image"), "--podman",
                                           "--charliecloud"], env=env, timeout=1800), re.M).group(1)
    os.makedirs(IMAGES, exist_ok=True)
    entries = []
    for library in ("openmpi", "mpich"):
        context = os.path.join(RECIPES, library)
        written = generate.write(spec_of(mpi_doc(library, "image", "podman")), context,
                                 formats=("docker",), base_image=base)
        tag = written["recipe_sha256"][:12]
        ref = "localhost/modak/mpi-%s:%s" % (library, tag)
        uri = "docker://" + ref
        have = subprocess.run(["podman", "image", "exists", ref], check=False).returncode == 0
        if not have:
            run(["podman", "build", "--pull=never", "-f", written["recipes"]["docker"], "-t", ref, context])
        directory = os.path.join(IMAGES, names.cache_name(uri))
        if not os.path.isdir(directory):
            run(["ch-image", "build", "--force", "-f", written["recipes"]["docker"], "-t", ref, context], env=env)
            run(["ch-convert", "-i", "ch-image", "-o", "dir", ref, directory + ".part"], env=env)
            os.rename(directory + ".part", directory)
            # the jobs run the directory: the storage's copy (and its build cache's) is not kept to the run's end
            run(["ch-image", "delete", ref], env=env)
        entry = dict(written["catalog_entry"], uri=uri)
        entries.append(entry)
    run(["ch-image", "build-cache", "--gc"], env=env)    # what only the deleted images held
    catalog = os.path.join(SHARED, "mpi-catalog.yaml")
    with open(catalog + ".part", "w") as handle:
        yaml.safe_dump({"images": entries}, handle)
    os.replace(catalog + ".part", catalog)
    return catalog


@pytest.mark.parametrize("engine", ["podman", "charliecloud"])
@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_mpi_job_in_a_modak_image_runs_across_two_nodes(library, engine, multinode, shared_dir, mpi_images):
    program = compile_program(library, shared_dir)
    result = optimise(mpi_doc(library, "mpi-%s-%s" % (engine, library), engine), shared_dir, catalog=mpi_images)
    assert result["image"]["uri"].startswith("docker://localhost/modak/mpi-%s:" % library)
    assert result["image"]["mpi_pmi"] == PMI[library]
    text = result["job_script_content"]
    assert "srun --mpi=%s --ntasks=4 " % PMI[library] in text
    state, lines = submit_and_wait(multinode, result["job_script"], shared_dir)
    assert state == "COMPLETED", "\n".join([text] + lines)
    assert_four_ranks_on_two_nodes(lines)
    assert program in text
