"""The shell command that places a file computed on the controller into the host's output directory
(plugin_utils/remote_files.PLACE), run by /bin/sh as the action plugins run it: what it reports, what it writes,
and what it refuses. The same command through real ansible-playbook runs: tests/integration/test_remote_files.py."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.plugin_utils.remote_files import PLACE, TOOL_MISSING, mode_form

SHELLCHECK = shutil.which("shellcheck") or os.path.join(ROOT, ".venv", "bin", "shellcheck")


def place(tmp_path, text, mode=0o755, check=False, path=None):
    source = tmp_path / "source"
    source.write_text(text)
    env = dict(os.environ, PATH=path) if path else None
    done = subprocess.run(["/bin/sh", "-c", PLACE, "modak-place", str(source), str(tmp_path / "out"), "job.sh",
                           "0%o" % mode, mode_form(mode), "check" if check else "write"],
                          capture_output=True, text=True, check=False, env=env)
    return done.returncode, done.stdout.strip(), done.stderr


def test_mode_form_is_what_ls_shows():
    assert mode_form(0o755) == "-rwxr-xr-x" and mode_form(0o644) == "-rw-r--r--" and mode_form(0o600) == "-rw-------"


def test_it_writes_once_then_reports_the_same(tmp_path):
    assert place(tmp_path, "echo one\n") == (0, "changed", "")
    target = tmp_path / "out" / "job.sh"
    assert target.read_text() == "echo one\n" and stat.S_IMODE(target.stat().st_mode) == 0o755
    assert place(tmp_path, "echo one\n") == (0, "same", "")
    assert place(tmp_path, "echo two\n") == (0, "changed", "") and target.read_text() == "echo two\n"
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["job.sh"]


def test_check_mode_compares_and_writes_nothing(tmp_path):
    assert place(tmp_path, "echo one\n", check=True) == (0, "changed", "")
    assert not (tmp_path / "out").exists()
    place(tmp_path, "echo one\n")
    assert place(tmp_path, "echo one\n", check=True) == (0, "same", "")
    os.chmod(str(tmp_path / "out" / "job.sh"), 0o700)
    assert place(tmp_path, "echo one\n", check=True) == (0, "mode", "")
    assert stat.S_IMODE((tmp_path / "out" / "job.sh").stat().st_mode) == 0o700


def test_only_the_mode_is_set_when_the_content_is_the_same(tmp_path):
    place(tmp_path, "echo one\n")
    os.chmod(str(tmp_path / "out" / "job.sh"), 0o700)
    assert place(tmp_path, "echo one\n") == (0, "mode", "")
    assert stat.S_IMODE((tmp_path / "out" / "job.sh").stat().st_mode) == 0o755


def test_a_link_at_the_path_is_replaced_never_followed(tmp_path):
    (tmp_path / "out").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("echo one\n")            # the same text: still a link, so it is replaced
    os.symlink(str(elsewhere), str(tmp_path / "out" / "job.sh"))
    assert place(tmp_path, "echo one\n") == (0, "changed", "")
    assert not os.path.islink(str(tmp_path / "out" / "job.sh")) and elsewhere.read_text() == "echo one\n"


def test_a_directory_at_the_path_is_refused(tmp_path):
    (tmp_path / "out" / "job.sh").mkdir(parents=True)
    rc, said, err = place(tmp_path, "echo one\n")
    assert rc == 2 and said == "" and "job.sh is a directory" in err
    assert os.listdir(str(tmp_path / "out")) == ["job.sh"]


def test_a_missing_tool_is_said_by_its_exit_code(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("mktemp", "ls", "cut", "cat", "chmod", "mv", "mkdir", "rm"):
        os.symlink(shutil.which(tool), str(bindir / tool))
    rc, _said, _err = place(tmp_path, "echo one\n", path=str(bindir))
    assert rc == TOOL_MISSING and not (tmp_path / "out").exists()


@pytest.mark.skipif(not os.path.exists(SHELLCHECK), reason="shellcheck comes with the developer venv")
def test_the_command_passes_shellcheck_as_posix_sh():
    """SC2012 (ls for file names) is left out: ls reads the mode of one path given whole, never names."""
    done = subprocess.run([SHELLCHECK, "--shell=sh", "--severity=style", "--exclude=SC2012", "-"], input=PLACE + "\n", capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout
