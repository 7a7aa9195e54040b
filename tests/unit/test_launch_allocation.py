"""The launch agrees with the allocation: for every scheduler, the processes the launch line starts (srun
--ntasks, mpirun -np, mpiexec -n) are the tasks the directives allocate (Slurm --ntasks, or --nodes x
--ntasks-per-node; PBS Pro the select's mpiprocs; Torque ppn over CPUs per task; Grid Engine slots over CPUs per
task). Generated requests: nodes, tasks, tasks per node, CPUs per task and ranks, each present or not."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline

SCHEDULERS = ("slurm", "pbspro", "torque", "gridengine")


def maybe(strategy):
    return st.one_of(st.none(), strategy)


@st.composite
def requests(draw):
    options = {"node_count": draw(maybe(st.integers(1, 8))), "core_count": draw(maybe(st.integers(1, 256))),
               "process_count_per_node": draw(maybe(st.integers(1, 64))),
               "core_count_per_process": draw(maybe(st.integers(1, 8)))}
    app = {"executable": "./prog", "app_type": "mpi", "mpi_ranks": draw(maybe(st.integers(1, 256)))}
    return {"job": {"job_options": dict((k, v) for k, v in options.items() if v is not None),
                    "application": dict((k, v) for k, v in app.items() if v is not None),
                    "target": {"job_scheduler_type": draw(st.sampled_from(SCHEDULERS))}}}


def started(run_line):
    """The processes a launch line starts."""
    match = re.search(r"(?:--ntasks=|-np |-n )(\d+)", run_line)
    return int(match.group(1)) if match else 1


def words(directives, prefix):
    return [line[len(prefix):].strip() for line in directives if line.startswith(prefix)]


def allocated(scheduler, directives, cpus_per_task):
    """The tasks the directives allocate, read as the scheduler reads them."""
    if scheduler == "slurm":
        found = dict(re.match(r"--([a-z-]+)=(\S+)", w).groups() for w in words(directives, "#SBATCH"))
        if "ntasks" in found:
            return int(found["ntasks"])
        return int(found.get("nodes", 1)) * int(found.get("ntasks-per-node", 1))
    if scheduler == "pbspro":
        select = [w for w in words(directives, "#PBS") if w.startswith("-l select=")][0][len("-l select="):]
        total = 0
        for chunk in select.split("+"):
            parts = chunk.split(":")
            resources = dict(p.split("=", 1) for p in parts[1:])
            total += int(parts[0]) * int(resources.get("mpiprocs", 1))
        return total
    if scheduler == "torque":
        spec = [w for w in words(directives, "#PBS") if w.startswith("-l nodes=")][0][len("-l nodes="):]
        return sum(int(part.split(":")[0]) * int(re.search(r"ppn=(\d+)", part).group(1))
                   for part in spec.split("+")) // cpus_per_task
    pe = [w for w in words(directives, "#$") if w.startswith("-pe ")]
    return int(pe[0].split()[2]) // cpus_per_task if pe else 1


@given(doc=requests())
@settings(max_examples=300, deadline=None, derandomize=True)
def test_the_launch_starts_the_tasks_the_directives_allocate(catalog, doc):
    result = pipeline.optimise(doc, catalog)
    run_line = result.script.body[-1]
    assert started(run_line) == allocated(result.script.scheduler, result.script.directives,
                                          result.settings.cpus_per_task), (result.script.text, result.explanation)
