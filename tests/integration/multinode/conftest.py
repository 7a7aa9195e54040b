"""A real Slurm cluster of several nodes on this machine, beside the read-back cluster of tests/integration/slurm.

The session fixture ``multinode`` runs start-multinode.sh, which installs the Debian packages when they are
missing (Slurm, munge, libpmix2, Open MPI, MPICH) and starts its own munged, a slurmctld and one slurmd per node
(mn1, mn2, mn3; each slurmd with its own port and a private /tmp), all reached through ``SLURM_CONF``; beside them
the partitions of placement: 'fast' on those nodes, 'slow' on three nodes of its own (mn4, mn5, mn6) whose slurmd
runs under a CPU quota; and the resilience tests' partitions 'preempt' and 'nodeloss' on nodes of their own. It
yields the environment the clients need and where jobs keep their files: under /var/tmp/modak-multinode, which every
node sees (the host's /tmp is hidden from the nodes). It needs root and apt-get; without them the tests fail
with a message that says so (they are never skipped). The cluster is started once per run whichever worker needs
it first (services.shared) and stopped after the run's last user only when this run started it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
import services

HERE = os.path.dirname(os.path.abspath(__file__))
START = os.path.join(HERE, "start-multinode.sh")
STOP = os.path.join(HERE, "stop-multinode.sh")
CONF = "/etc/slurm-multinode/slurm.conf"
SHARED = "/var/tmp/modak-multinode"
PARTITION = "multinode"
NODES = ("mn1", "mn2", "mn3")
CPUS = 4
SLOW_NODES = ("mn4", "mn5", "mn6")    # start-multinode.sh's defaults: MULTINODE_SLOW_NODES, MULTINODE_SLOW_QUOTA
SLOW_QUOTA = 0.25                     # of one CPU, each slow node


class Cluster(dict):
    """The client environment (``SLURM_CONF`` set) with the cluster's facts as attributes."""

    partition = PARTITION
    nodes = NODES
    cpus = CPUS
    fast_partition = "fast"          # on ``nodes``
    slow_partition = "slow"          # on ``slow_nodes``, each at most ``slow_quota`` of a CPU
    slow_nodes = SLOW_NODES
    slow_quota = SLOW_QUOTA
    preempt_partition = "preempt"    # two nodes of its own, which 'urgent' also covers (test_resilience.py)
    nodeloss_partition = "nodeloss"  # three nodes of their own: a job of two loses one (test_resilience.py)
    conf = CONF
    workdir = SHARED

    def run(self, argv, timeout=120, cwd=None):
        return subprocess.run(argv, env=self, cwd=cwd or self.workdir, capture_output=True, text=True,
                              timeout=timeout, check=False)


def start_multinode():
    env = dict(os.environ, MULTINODE_NODES=str(len(NODES)), MULTINODE_CPUS=str(CPUS))
    proc = subprocess.run(["bash", START], env=env, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        pytest.fail("start-multinode.sh failed (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr),
                    pytrace=False)
    return {"started": "multinode: started" in proc.stdout}


def stop_multinode(value):
    if value["started"]:
        subprocess.run(["bash", STOP], capture_output=True, timeout=60, check=False)


@pytest.fixture(scope="session")
def multinode(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the multi-node tests start a real Slurm cluster and must run as root", pytrace=False)
    with services.shared(tmp_path_factory, "multinode", start_multinode, stop_multinode):
        os.makedirs(SHARED, exist_ok=True)
        workdir = tempfile.mkdtemp(prefix="run-", dir=SHARED)
        cluster = Cluster(os.environ, SLURM_CONF=CONF)
        cluster.workdir = workdir
        yield cluster
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def shared_dir(multinode, request):
    """A directory of this test that every node of the cluster sees."""
    path = tempfile.mkdtemp(prefix=request.node.name[:40].replace("[", "-").replace("]", "") + "-",
                            dir=multinode.workdir)
    return path
