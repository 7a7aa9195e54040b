"""Collection quality gates: ansible-lint (production), ansible-test sanity (no ignore file), ansible-doc."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

BIN = os.path.dirname(sys.executable)
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))
PIP_VERSION = "24.2"  # the pip version ansible-test bootstraps its virtual environments with


def _env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                NO_COLOR="1", PATH=BIN + os.pathsep + os.environ.get("PATH", ""))


def _tracked_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return [f for f in out.split("\0") if f and os.path.lexists(os.path.join(ROOT, f))]


def test_ansible_lint_production_profile():
    result = subprocess.run([os.path.join(BIN, "ansible-lint"), "--profile", "production", "--nocolor"],
                            cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Profile 'production' was required, and it passed" in result.stdout + result.stderr


@pytest.fixture(scope="module")
def rendered():
    """One ansible-doc run renders every module (one process instead of one per module); returns its exit code,
    stderr and each module's page (the text from its '> MODULE' heading to the next)."""
    result = subprocess.run([os.path.join(BIN, "ansible-doc")] + ["sodalite.modak.%s" % m for m in MODULES], cwd=ROOT,
                            env=_env(), capture_output=True, text=True, timeout=600, check=False)
    pages = {}
    for page in re.split(r"^(?=> MODULE )", result.stdout, flags=re.M):
        match = re.match(r"> MODULE sodalite\.modak\.(\w+) ", page)
        if match:
            pages[match.group(1)] = page
    return result.returncode, result.stderr, pages


@pytest.mark.parametrize("module", MODULES)
def test_every_module_renders_with_ansible_doc(rendered, module):
    returncode, stderr, pages = rendered
    assert returncode == 0, stderr
    assert module in pages, sorted(pages)
    assert "EXAMPLES" in pages[module] and "RETURN VALUES" in pages[module]


def test_ansible_test_sanity_passes_without_ignore_file(tmp_path):
    """Runs every sanity test in a git repository at ansible_collections/sodalite/modak holding the checkout's
    files as git lists them (tracked, and new ones not ignored), committed: ansible-test reads a git tree's files
    from git, as in a maintainer's clone (the in-tree collections/ link is not tracked, and would fail 'symlinks')."""
    assert not os.path.exists(os.path.join(ROOT, "tests", "sanity")), "no ignore files"
    dest = tmp_path / "ansible_collections" / "sodalite" / "modak"
    for rel in _tracked_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        source = os.path.join(ROOT, rel)
        if os.path.islink(source):
            os.symlink(os.readlink(source), str(target))
        else:
            shutil.copy2(source, str(target))
    git = ["git", "-c", "user.name=modak", "-c", "user.email=modak@localhost", "-c", "commit.gpgsign=false"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the checkout"]):
        subprocess.run(git + argv, cwd=str(dest), check=True, capture_output=True)
    # ansible-test fetches a pip bootstrap script from a host this machine cannot reach; give it ours
    cache = os.path.expanduser("~/.ansible/test/cache")
    os.makedirs(cache, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "tests", "lint", "get_pip_shim.py"),
                os.path.join(cache, "get_pip_%s.py" % PIP_VERSION.replace(".", "_")))
    result = subprocess.run([os.path.join(BIN, "ansible-test"), "sanity", "--venv", "--requirements",
                             "--python", "%d.%d" % sys.version_info[:2], "--color", "no"],
                            cwd=str(dest), env=_env(), capture_output=True, text=True, timeout=1500, check=False)
    log = "\n".join(line for line in (result.stdout + result.stderr).splitlines()
                    if not line.startswith("WARNING: Location"))
    assert result.returncode == 0, log[-6000:]
    assert "Running sanity test \"validate-modules\"" in log and "Running sanity test \"pylint\"" in log
