"""The job's variables reach a Charliecloud container literally, on top of the image's, and never through argv:
the lines modak writes, run by bash with the real ch-run on a busybox image directory."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry

ENV = (("A", "x $HOME y"), ("B", "it's"), ("C", "'q'"), ("D", "100%s \\n `id`"), ("PATH_EXTRA", "$(touch pwned)"),
       ("FROM_IMAGE", "the job's"))


@pytest.fixture(scope="module")
def ch_run():
    if shutil.which("ch-run") is None or not os.path.exists("/bin/busybox"):
        if os.geteuid() != 0:
            pytest.skip("ch-run and busybox-static are installed by root")
        # one apt-get at a time on the machine (scripts/apt-install)
        subprocess.run([os.path.join(ROOT, "scripts", "apt-install"), "charliecloud-runtime", "busybox-static"],
                       check=True, capture_output=True)
    return shutil.which("ch-run")


@pytest.fixture
def image(tmp_path):
    root = tmp_path / "img"
    for name in ("bin", "ch", "dev", "etc", "home", "proc", "root", "sys", "tmp"):
        (root / name).mkdir(parents=True)
    shutil.copy("/bin/busybox", str(root / "bin" / "busybox"))
    for applet in ("sh", "env"):
        os.symlink("busybox", str(root / "bin" / applet))
    for name in ("passwd", "group", "hosts", "resolv.conf"):
        (root / "etc" / name).write_text("")
    (root / "ch" / "environment").write_text("PATH=/bin\nFROM_IMAGE=image\n")
    return str(root)


def test_values_arrive_literally_over_the_image_environment(ch_run, image, tmp_path):
    runtime = registry.get("charliecloud")
    run = runtime.exec_argv(shell.Raw('"$IMAGE"'), ["/bin/env"], env=ENV, workdir="/")
    script = "\n".join(["set -eo pipefail", "export USER=\"${USER:-$(id -un)}\"", "IMAGE=%s" % shell.quote(image)]
                       + ["export %s=%s" % (name, shell.quote(value)) for name, value in ENV]
                       + runtime.env_lines(ENV) + [shell.command(run)])
    done = subprocess.run(["bash", "-c", script], cwd=str(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    for name, value in ENV:
        assert seen.get(name) == value, (name, seen.get(name), done.stdout)
    assert seen["PATH"] == "/bin"                              # the image's environment is read too
    assert not (tmp_path / "pwned").exists()
    assert not [n for n in os.listdir(str(tmp_path)) if n.startswith(".modak-env")], "the file is removed"
