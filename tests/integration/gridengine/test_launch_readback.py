"""The launch agrees with the allocation on Grid Engine: for generated requests (nodes, tasks, tasks per node, CPUs
per task, ranks), the processes ``mpirun -np`` starts times the CPUs per task are the slots Grid Engine reads from
the directives (``qstat -j``: 'parallel environment: NAME range: SLOTS'; one slot without a parallel environment),
the script submitted held."""

from __future__ import annotations

import os
import re
import subprocess

from helpers import ROOT
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))


def maybe(strategy):
    return st.one_of(st.none(), strategy)


@st.composite
def requests(draw):
    nodes = draw(maybe(st.integers(1, 4)))
    options = {"node_count": nodes, "core_count": draw(maybe(st.integers(nodes or 1, 32))),
               "process_count_per_node": draw(maybe(st.integers(1, 8))),
               "core_count_per_process": draw(maybe(st.integers(1, 4)))}
    app = {"executable": "/bin/true", "app_type": "mpi", "mpi_ranks": draw(maybe(st.integers(1, 32)))}
    return {"job": {"job_options": dict((k, v) for k, v in options.items() if v is not None),
                    "application": dict((k, v) for k, v in app.items() if v is not None),
                    "target": {"job_scheduler_type": "gridengine"}}}


@given(doc=requests())
@settings(max_examples=25, deadline=None, database=None, derandomize=True,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_mpirun_starts_the_slots_grid_engine_allocates(gridengine, tmp_path_factory, doc):
    result = pipeline.optimise(doc, CATALOG)
    folder = tmp_path_factory.mktemp("launch")
    script = folder / result.script.filename
    script.write_text(result.script.text)
    proc = subprocess.run(["qsub", "-terse", "-h", str(script)], env=gridengine, cwd=str(folder),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip().split(".")[0]
    try:
        shown = subprocess.run(["qstat", "-j", job], env=gridengine, capture_output=True, text=True,
                               check=True).stdout
    finally:
        subprocess.run(["qdel", job], env=gridengine, capture_output=True, check=False)
    match = re.search(r"^parallel environment:\s+\S+ range: (\d+)", shown, re.M)
    slots = int(match.group(1)) if match else 1
    started = int(re.search(r"^mpirun .*?-np (\d+)", result.script.text, re.M).group(1))   # after its host file
    assert slots == started * result.settings.cpus_per_task, (result.script.text, shown)
