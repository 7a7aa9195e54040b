"""The launch agrees with the allocation, through Slurm's read-back: for generated requests (nodes, tasks, tasks per
node, CPUs per task, ranks), the tasks ``srun --ntasks`` starts are the job's tasks as Slurm reads them from the
directives (NumTasks of ``scontrol show job -o``, the script submitted held)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog

from . import readback

CATALOG = ImageCatalog.from_file(ROOT + "/catalog/images.yaml")
NODES, NODE_CPUS = 5, 128          # the test cluster's DOWN nodes hold what held jobs ask


def maybe(strategy):
    return st.one_of(st.none(), strategy)


@st.composite
def requests(draw):
    nodes = draw(maybe(st.integers(1, 4)))
    options = {"node_count": nodes, "core_count": draw(maybe(st.integers(nodes or 1, 64))),
               "process_count_per_node": draw(maybe(st.integers(1, 16))),
               "core_count_per_process": draw(maybe(st.integers(1, 4)))}
    app = {"executable": "/bin/true", "app_type": "mpi", "mpi_ranks": draw(maybe(st.integers(1, 64)))}
    return {"job": {"job_options": dict((k, v) for k, v in options.items() if v is not None),
                    "application": dict((k, v) for k, v in app.items() if v is not None),
                    "target": {"job_scheduler_type": "slurm"}}}


@given(doc=requests())
@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_srun_starts_the_tasks_slurm_allocates(slurm, tmp_path_factory, doc):
    result = pipeline.optimise(doc, CATALOG)
    folder = tmp_path_factory.mktemp("launch")
    script = folder / result.script.filename
    script.write_text(result.script.text)
    job = readback.submit_held(str(script), str(folder))
    try:
        record = readback.show_job(job)
    finally:
        readback.cancel([job])
    started = int(re.search(r"^srun .*?--ntasks=(\d+)", result.script.text, re.M).group(1))   # after --mpi=
    assert int(record["NumTasks"]) == started, (result.script.text, record)
