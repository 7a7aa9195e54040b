"""Services shared by every test of a run, when the run spreads its tests over several pytest-xdist workers.

A session fixture runs once per worker. A real service (a Slurm cluster, Grid Engine) must run once per run, and a
worker that restarts it would kill the jobs of the others. ``shared`` starts a service under a file lock with a
reference count kept in the run's own directory (shared by the run's workers, not by other runs): the first user
of the run starts it, the last one stops it. Without xdist the count is 1 and it behaves as a session fixture.

Resources that only one test may use at a time (a Charliecloud build storage) are taken with ``exclusive``.
"""

from __future__ import annotations

import contextlib
import json
import os

from filelock import FileLock

LOCK_DIR = "/var/tmp/modak-test-locks"   # locks between runs as well (a storage that outlives a run)
DEMO_STORAGE = "/var/tmp/modak-demo.ch"   # scripts/demo's Charliecloud storage, kept between runs
# scripts/demo's wheel directory (MODAK_DEMO_DIR/wheels), kept between runs: every build of modak's PyTorch image
# in the demo's storage places these same files, so ch-image's build cache (each path's mode, size and time) finds
# the framework layer built by whichever build came first
DEMO_WHEELS = "/tmp/modak-demo/wheels"


def run_dir(tmp_path_factory):
    """A directory that every worker of this run shares, and no other run."""
    base = tmp_path_factory.getbasetemp()
    # under xdist: <run>/popen-gwN is each worker's, <run> the run's; without it the base is the run's
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


# Tests that use a resource only one of them may use at a time run on one pytest-xdist worker (--dist loadgroup), one
# after another, so that no worker waits on another's lock; the services (Slurm, Grid Engine, the multi-node
# cluster) are shared by every worker instead (shared below). A test is in a group when it uses one of its fixtures.
GROUPS = {
    # the multi-node Slurm: its resilience tests lose a node, restart the controller and the cluster, so every test
    # that uses the cluster runs on one worker, one after the other (first: a DDP image test is one of them; it
    # still holds the demo's storage by its lock)
    "multinode": ("multinode",),
    "modak-demo.ch": ("quickstart", "pytorch_image", "ddp_image", "demo_storage"),   # the demo's build storage
    "mpi-images": ("mpi_images",),          # the MPI images, built into Charliecloud's default storage
    "busybox-base": ("busybox_base",),      # podman's local base image, imported under one name
}


# Within a group, tests run in collection order, except these files, which come first: they mostly wait (jobs that
# reach their time limits, a queue filled for a minute), while the group's later tests wait for a lock that the
# other worker's first group holds at the start (the DDP image waits for the demo's build storage, which the
# quickstart holds for its first minutes).
FIRST_IN_GROUP = ("tests/integration/multinode/test_resilience.py", "tests/integration/multinode/test_placement.py")


def order_key(path):
    """Where a test of the file ``path`` (relative to the repository) comes in a stable sort of the collection."""
    path = path.replace(os.sep, "/")
    return FIRST_IN_GROUP.index(path) if path in FIRST_IN_GROUP else len(FIRST_IN_GROUP)


def group_of(fixturenames):
    """The xdist group of a test that uses ``fixturenames`` (its own and those they need), or None."""
    for group, fixtures in GROUPS.items():
        if any(name in fixturenames for name in fixtures):
            return group
    return None


@contextlib.contextmanager
def shared(tmp_path_factory, name, start, stop):
    """Yields what ``start()`` returned (JSON data) to the run's first user; ``stop(value)`` runs after the last
    user is done.
    ``start`` must be idempotent enough to restart a service that an earlier run left behind."""
    directory = run_dir(tmp_path_factory)
    lock = FileLock(str(directory / (name + ".lock")))
    state = directory / (name + ".json")
    with lock:
        data = json.loads(state.read_text()) if state.exists() else {"users": 0}
        if data["users"] == 0:
            data["value"] = start()
        data["users"] += 1
        state.write_text(json.dumps(data))
    try:
        yield data["value"]
    finally:
        with lock:
            data = json.loads(state.read_text())
            data["users"] -= 1
            state.write_text(json.dumps(data))      # before stop(): a failed stop leaves no user behind
            if data["users"] == 0:
                stop(data["value"])


@contextlib.contextmanager
def exclusive(name, timeout=3600):
    """Holds the machine-wide lock ``name`` (a resource only one test may use at a time)."""
    os.makedirs(LOCK_DIR, exist_ok=True)
    with FileLock(os.path.join(LOCK_DIR, name + ".lock"), timeout=timeout):
        yield


# podman on the test machines: runc (crun refuses hybrid cgroups) and ulimits the kernel allows (docs/containers.md)
CONTAINERS_CONF = ('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n\n'
                   '[engine]\nruntime = "runc"\n')


def podman_settings(conf="/etc/containers/containers.conf"):
    """Writes podman's containers.conf when it lacks the two settings, atomically: workers running podman at the
    same time never read a half-written file."""
    current = open(conf, encoding="utf-8").read() if os.path.exists(conf) else ""
    if 'runtime = "runc"' not in current or "nofile=1024:1024" not in current:
        os.makedirs(os.path.dirname(conf), exist_ok=True)
        part = "%s.%d.part" % (conf, os.getpid())
        with open(part, "w", encoding="utf-8") as handle:
            handle.write(CONTAINERS_CONF)
        os.replace(part, conf)
