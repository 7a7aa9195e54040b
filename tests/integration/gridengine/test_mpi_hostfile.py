"""mpirun under a real Grid Engine: the host list comes from $PE_HOSTFILE, converted to the MPI library's
host-file form, and a program that allreduces its ranks over the slots of the parallel environment prints
ranks 0-3 of 4 and the right sum, with Open MPI and with MPICH."""

from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import SLOTS, batch_job

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(os.path.dirname(HERE), "multinode", "data", "allreduce.c")
INSTALL = os.path.join(os.path.dirname(HERE), "multinode", "install-mpi.sh")
MPICC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
FLAG = {"openmpi": "--hostfile", "mpich": "-f"}
# Open MPI refuses to start as root unless told; the test machine's jobs run as root
AS_ROOT = {"openmpi": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}, "mpich": {}}


@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_mpirun_reads_the_parallel_environment_hosts(library, gridengine, play, tmp_path):
    assert SLOTS >= 4
    subprocess.run(["bash", INSTALL], check=True, capture_output=True, timeout=900)
    binary = str(tmp_path / "allreduce")
    subprocess.run([MPICC[library], "-o", binary, SOURCE], check=True, capture_output=True)
    # the library's mpirun first on PATH, as a site's 'module load mpich' does (Debian's mpirun is Open MPI's)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "mpirun").write_text('#!/bin/sh\nexec /usr/bin/mpirun.%s "$@"\n' % library)
    (tools / "mpirun").chmod(0o755)
    doc = {"job": {"job_options": {"job_name": "ge-mpi", "node_count": 1, "standard_output_file": "mpi.out"},
                   "application": {"app_type": "mpi", "executable": binary, "mpi_ranks": 4,
                                   "mpi_library": library, "environment": AS_ROOT[library],
                                   "pre-execution": 'export PATH="%s:$PATH"' % tools},
                   "target": {"job_scheduler_type": "gridengine"}}}
    result = pipeline.optimise(doc, ImageCatalog.from_data({"images": []}, "empty"))
    text = result.script.text
    assert 'mpirun %s "$MODAK_HOSTFILE" -np 4 %s' % (FLAG[library], binary) in text
    script = tmp_path / result.script.filename
    script.write_text(text)
    proc, r = play(batch_job(script=str(script), wait=True, poll_interval=0.5, wait_timeout=180))
    output = (tmp_path / "mpi.out").read_text() if (tmp_path / "mpi.out").exists() else ""
    assert r and r.get("state") == "COMPLETED", (proc.stdout[-2000:], r, output)
    lines = output.splitlines()
    assert sorted(l.rsplit(" on ", 1)[0] for l in lines if l.startswith("rank ")) == [
        "rank %d of 4" % rank for rank in range(4)], output
    assert "sum 6" in lines, output
