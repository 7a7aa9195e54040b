"""Galaxy's own import checks (galaxy-importer) pass on the tarball ansible-galaxy builds from this tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from helpers import ROOT

BIN = os.path.dirname(sys.executable)


def _copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        source = os.path.join(ROOT, rel)
        if not os.path.lexists(source) or (os.path.isdir(source) and not os.path.islink(source)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), os.path.join(dest, rel))
        else:
            shutil.copy2(source, os.path.join(dest, rel))


def test_galaxy_importer_accepts_the_built_tarball(tmp_path):
    source = tmp_path / "source"
    _copy_tree(str(source))
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1",
               HOME=str(tmp_path))
    env.pop("ANSIBLE_CONFIG", None)
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), "."],
                   cwd=str(source), env=env, check=True, capture_output=True, timeout=600)
    tarball = next(str(tmp_path / name) for name in os.listdir(tmp_path) if name.endswith(".tar.gz"))
    done = subprocess.run([sys.executable, "-m", "galaxy_importer.main", tarball], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, check=False, timeout=1200)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-6000:]
    assert "Importer processing completed successfully" in log
    assert not [line for line in log.splitlines() if line.startswith("ERROR")], log[-6000:]
