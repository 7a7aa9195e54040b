"""The multi-node cluster itself: three nodes that each run a task, each with its own /tmp."""

from __future__ import annotations

import os
import re
import subprocess
import time


def wait_job(cluster, job_id, timeout=120):
    """The job's final state, read back through sacct-less scontrol (no accounting here)."""
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        proc = cluster.run(["scontrol", "show", "job", job_id])
        match = re.search(r"JobState=(\S+)", proc.stdout)
        state = match.group(1) if match else ""
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.5)
    raise AssertionError("job %s did not end in %ds (last state %r)" % (job_id, timeout, state))


def test_every_node_is_up(multinode):
    """Every node answers and takes jobs (idle, or running other tests' jobs)."""
    proc = multinode.run(["sinfo", "-h", "-N", "-p", multinode.partition, "-o", "%N %T"])
    assert proc.returncode == 0, proc.stderr
    states = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert sorted(states) == sorted(multinode.nodes), states
    assert all(state in ("idle", "mixed", "allocated", "completing") for state in states.values()), states


def test_three_nodes_run_one_task_each(multinode, shared_dir):
    script = os.path.join(shared_dir, "nodes.sh")
    with open(script, "w") as handle:
        handle.write("#!/bin/bash\n#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=1\n"
                     "srun bash -c 'echo \"$SLURM_PROCID $SLURMD_NODENAME $(hostname)\"'\n")
    proc = multinode.run(["sbatch", "--parsable", "--output=%s/nodes.out" % shared_dir, script], cwd=shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert wait_job(multinode, proc.stdout.strip().split(";")[0]) == "COMPLETED"
    with open(os.path.join(shared_dir, "nodes.out")) as handle:
        lines = sorted(handle.read().split("\n")[:-1])
    assert lines == ["0 mn1 mn1", "1 mn2 mn2", "2 mn3 mn3"]   # each node has its own host name too


def test_each_node_has_its_own_tmp(multinode, shared_dir):
    """A file one node writes into /tmp is not seen by the others (PMIx needs that), the shared dir is."""
    mark = "modak-multinode-%d" % os.getpid()
    proc = multinode.run(["srun", "--nodes=3", "--ntasks-per-node=1", "bash", "-c",
                          'if [ "$SLURMD_NODENAME" = mn1 ]; then touch /tmp/%s %s/%s; fi; sleep 2; '
                          'echo "$SLURMD_NODENAME $(ls /tmp/%s 2>/dev/null | wc -l) $(ls %s/%s | wc -l)"; '
                          'rm -f /tmp/%s' % (mark, shared_dir, mark, mark, shared_dir, mark, mark)],
                         cwd=shared_dir)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")[:-1]) == ["mn1 1 1", "mn2 0 1", "mn3 0 1"]
    assert not os.path.exists(os.path.join("/tmp", mark))


def test_started_again_it_changes_nothing(multinode):
    from .conftest import START
    proc = subprocess.run(["bash", START], env=dict(os.environ), capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "multinode: already running" in proc.stdout
