"""A real Slurm cluster (with the PBS wrappers) for every integration test that needs one: one session fixture,
so the cluster starts once per run whichever folders the run selects.

The session fixture ``slurm`` runs slurm/start-slurm.sh, which installs the Debian packages when they are
missing and starts munged, slurmctld and slurmd on 127.0.0.1. It needs root and apt-get; without them
the tests fail with a message that says so (they are never skipped).

One node runs jobs (``node00`` on 127.0.0.1, 16 CPUs); five more (node01-node04 and ``ssd``, 128 CPUs, 4 GPUs each) never
run a slurmd and stay DOWN: jobs that need them are accepted and wait, which is what the held jobs of the
read-back oracle (slurm/readback.py) need. Every partition holds all six nodes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import services

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
START = os.path.join(HERE, "slurm", "start-slurm.sh")
STOP = os.path.join(HERE, "slurm", "stop-slurm.sh")
# the node announces more CPUs and memory than this machine has (config_overrides) so that the
# examples' requests fit; jobs share the real cores
CLUSTER_CPUS = 16
CLUSTER_MEM_MB = 131072
# nodes that are configured but never run (held jobs are read back there); 'ssd' is a node name the original
# MODAK's documents ask for (request_specific_nodes: ssd)
RUNNING_NODE = "node00"          # not 'localhost': slurmd refuses that name next to other nodes
DOWN_NODES = "node01 node02 node03 node04 ssd"
DOWN_CPUS = 128
DOWN_MEM_MB = 262144
DOWN_GPUS = 4
DOWN_FEATURES = "avx2,ib"
# partitions the conformance corpus (tests/data/original/corpus) and the generated documents ask for
CORPUS_PARTITIONS = ("ssd", "standard", "normal", "gpu", "long")


def example_partitions():
    """Partition names the examples ask for, so that the test cluster has them."""
    from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    catalog = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
    names = set()
    for name in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if not os.path.isfile(os.path.join(ROOT, "examples", name)):
            continue                     # examples/sites/: site profiles and the DSLs that need them
        doc = dsl.load_file(os.path.join(ROOT, "examples", name))
        doc["job"].setdefault("target", {})["job_scheduler_type"] = "slurm"
        result = pipeline.optimise(doc, catalog)
        for line in result.script.directives:
            match = re.match(r"^#SBATCH --partition=(\S+)$", line)
            if match and match.group(1) != "debug":
                names.add(match.group(1))
    return sorted(names)


def start_slurm(clean=True):
    partitions = sorted(set(example_partitions()) | set(CORPUS_PARTITIONS))
    env = dict(os.environ, SLURM_CPUS=str(CLUSTER_CPUS), SLURM_MEM_MB=str(CLUSTER_MEM_MB),
               SLURM_PARTITIONS=" ".join(partitions), SLURM_CLEAN="1" if clean else "0",
               SLURM_NODE_NAME=RUNNING_NODE, SLURM_DOWN_NODES=DOWN_NODES, SLURM_DOWN_CPUS=str(DOWN_CPUS),
               SLURM_DOWN_MEM_MB=str(DOWN_MEM_MB),
               SLURM_DOWN_GPUS=str(DOWN_GPUS), SLURM_DOWN_FEATURES=DOWN_FEATURES)
    proc = subprocess.run(["bash", START], env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        pytest.fail("start-slurm.sh failed (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr),
                    pytrace=False)
    return proc.stdout


def stop_slurm(_value=None):
    subprocess.run(["bash", STOP], capture_output=True, timeout=60, check=False)


def restart_slurm():
    # stop first: a running slurmctld keeps its old configuration (node size, partitions)
    stop_slurm()
    start_slurm()
    return {"cpus": CLUSTER_CPUS, "max_cpus": DOWN_CPUS}


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The cluster, started once per run (services.shared) whichever worker needs it first; no test stops it."""
    if os.geteuid() != 0:
        pytest.fail("the Slurm tests start a real cluster and must run as root", pytrace=False)
    with services.shared(tmp_path_factory, "slurm", restart_slurm, stop_slurm) as cluster:
        yield cluster


def _install_torch():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import runner  # pylint: disable=import-outside-toplevel
    runner.ensure_torch(install=True)
    return True


@pytest.fixture(scope="session")
def torch_installed(tmp_path_factory):
    """The pinned CPU torch (benchmarks/requirements-bench.txt) in the suite's environment, installed when missing
    once per run, whichever worker needs it first (services.shared): two pip installs into one environment at the
    same time would break it. Every test that runs the workload in .venv's Python asks for it."""
    with services.shared(tmp_path_factory, "torch", _install_torch, lambda _value: None):
        yield


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """(tarball, collections path, installed root): the collection built with ansible-galaxy from a copy of this
    working tree and installed into a temporary path (galaxy_build.py), once per run."""
    from galaxy_build import build_and_install
    return build_and_install(tmp_path_factory.mktemp("galaxy"))


@pytest.fixture
def demo_storage():
    """The demo's Charliecloud build storage, held by this test alone (services.exclusive; the tests that use it
    run on one worker, GROUPS in tests/services.py). What is built there stays between runs: ch-image's build
    cache is keyed by each step's content, so an image built once (the demo's, the container benchmark's) is not
    built again, and one whose steps match the demo's up to the framework (modak's image of the container
    benchmark) builds only what differs."""
    with services.exclusive("modak-demo.ch"):
        yield services.DEMO_STORAGE
