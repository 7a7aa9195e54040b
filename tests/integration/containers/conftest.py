"""Real container parts for the tests: podman/buildah (runc), a local registry and a busybox base.

Session fixtures install what is missing (Debian packages), write containers.conf (the two settings
this machine needs, see the feasibility notes), start Debian's docker-registry by hand (no systemd)
on 127.0.0.1 and a free port (``start_registry`` gives tests registries of their own, with an ``auth:``
section; apache2-utils provides htpasswd for them), and build a tiny base image from busybox-static (Docker Hub is not
reachable). The base carries stand-ins for apt-get, python3 and pip that log what they are asked to
do, so a generated Dockerfile builds offline in seconds; the log is checked by the tests.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time

import pytest
import requests
import services
from helpers import ROOT

PACKAGES = ("podman", "buildah", "runc", "busybox-static", "docker-registry", "skopeo", "apache2-utils")
BASE = "localhost/modak-test-base:latest"
STANDIN = """#!/bin/sh
echo "$(basename "$0") $*" >> /var/log/modak-standin.log
if [ "$(basename "$0")" = python3 ] && [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin" && ln -sf /usr/bin/pip "$3/bin/pip"
fi
if [ "$(basename "$0")" = python3 ] && [ "$1" = -c ]; then echo 2.6.0; fi
exit 0
"""
APPLETS = ("sh", "cat", "echo", "ls", "mkdir", "rm", "ln", "test", "[", "basename", "env", "id", "true")


def _run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


@pytest.fixture(scope="session")
def container_tools():
    if os.geteuid() != 0:
        pytest.skip("the container tests need root (rootful podman, apt-get)")
    # one apt-get at a time on the machine (scripts/apt-install): another worker may install at the same time
    subprocess.run([os.path.join(ROOT, "scripts", "apt-install")] + list(PACKAGES), check=True, capture_output=True)
    services.podman_settings()
    return True


def free_port():
    """A free TCP port on 127.0.0.1 (other test runs may share the machine)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_registry(work, port=None, extra_config=""):
    """Debian's docker-registry serving ``work``/data on 127.0.0.1; ``extra_config`` is YAML added at the
    top level (an ``auth:`` section). Yields {"url", "host", "log"}; the registry is stopped afterwards."""
    port = port or free_port()
    config = work / "config.yml"
    config.write_text("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n"
                      "  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%d\n%s" % (work / "data", port, extra_config))
    log_path = work / "registry.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["docker-registry", "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
        url = "http://127.0.0.1:%d" % port
        try:
            for _attempt in range(100):
                try:
                    # 200 without auth, 401 with it: either way the registry answers
                    if requests.get(url + "/v2/", timeout=1).status_code in (200, 401):
                        break
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            else:
                pytest.fail("docker-registry did not start: %s" % log_path.read_text())
            yield {"url": url, "host": "127.0.0.1:%d" % port, "log": log_path}
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def registry(container_tools, tmp_path_factory):
    """Debian's docker-registry on 127.0.0.1 (a free port: other test runs may share the machine)."""
    port = int(os.environ.get("MODAK_TEST_REGISTRY_PORT") or 0) or None
    with running_registry(tmp_path_factory.mktemp("registry"), port) as reg:
        yield reg


@pytest.fixture(scope="session")
def start_registry(container_tools):
    """``running_registry`` for tests that need a registry of their own (with authentication)."""
    return running_registry


@pytest.fixture(scope="session")
def busybox_base(container_tools, tmp_path_factory):
    """A tiny local base image: busybox-static plus logging stand-ins for apt-get, python3 and pip."""
    root = tmp_path_factory.mktemp("bb") / "rootfs"
    for d in ("bin", "usr/bin", "etc", "tmp", "var/log", "opt"):
        (root / d).mkdir(parents=True)
    shutil.copy("/bin/busybox", root / "bin" / "busybox")
    for applet in APPLETS:
        os.symlink("busybox", root / "bin" / applet)
    for tool in ("apt-get", "python3", "pip"):
        path = root / "usr" / "bin" / tool
        path.write_text(STANDIN)
        path.chmod(0o755)
    tar = root.parent / "bb.tar"
    _run(["tar", "-C", str(root), "-cf", str(tar), "."])
    _run(["podman", "import", "--change", "ENV PATH=/usr/bin:/bin", str(tar), BASE])
    return BASE
