"""Files computed on the controller reach the host through the output_file module (plugin_utils/remote_files.py,
files.place on the host): written once, then unchanged; the mode is kept as asked, a mode changed by hand is set
back on the same file; a directory at the path is refused. Real ansible-playbook runs.

Issue 31, an output directory that another user can write (a real one, ``nobody``, through setpriv): that user's
link, swapped in while the task acts, never makes the task change the link's target; a link to a
directory at the script's path is refused; --diff never reads through a link nor blocks on a FIFO."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest
import yaml
from helpers import ROOT

ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
EXAMPLE = os.path.join(ROOT, "examples", "tensorflow-xla-gpu-torque.json")
SCRIPT = "resnet.pbs"
OTHER_USER = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def run(tmp_path, *extra, check=False, path=None, timeout=300):
    """ansible-playbook of one optimise task writing tmp_path/out (PATH ``path``); (returncode, output, the task's
    result)."""
    tmp_path = pathlib.Path(tmp_path)
    book = tmp_path / "book.yml"
    tasks = [{"name": "Optimise", "sodalite.modak.optimise": {"dsl_file": EXAMPLE, "output_dir": str(tmp_path / "out")},
              "register": "optimised"},
             {"name": "Show", "ansible.builtin.debug": {"msg": "RESULT {{ optimised | to_json }}"}}]
    book.write_text(yaml.safe_dump([{"name": "optimise", "hosts": "localhost", "connection": "local",
                                     "gather_facts": False, "vars": {"ansible_python_interpreter": sys.executable},
                                     "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_LOCALHOST_WARNING="False")
    if path is not None:
        env["PATH"] = path
    argv = [ANSIBLE_PLAYBOOK, str(book)] + list(extra) + (["--check"] if check else [])
    done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    line = next((ln for ln in done.stdout.splitlines() if '"msg": "RESULT ' in ln), None)
    result = json.loads(json.loads("{%s}" % line.strip())["msg"][len("RESULT "):]) if line else None
    return done.returncode, done.stdout + done.stderr, result


def test_it_writes_once_then_changes_nothing(tmp_path):
    rc, out, result = run(tmp_path)
    assert rc == 0, out
    assert result["changed"] is True
    script = tmp_path / "out" / "resnet.pbs"
    assert result["job_script"] == str(script) and script.read_text() == result["job_script_content"]
    assert stat.S_IMODE(os.stat(str(script)).st_mode) == 0o700     # private: it may hold secrets
    rc, out, again = run(tmp_path)
    assert rc == 0 and again["changed"] is False, out
    rc, out, checked = run(tmp_path, "--diff", check=True)
    assert rc == 0 and checked["changed"] is False, out


def test_a_mode_changed_by_hand_is_put_back_and_check_mode_sees_it(tmp_path):
    run(tmp_path)
    script = tmp_path / "out" / "resnet.pbs"
    os.chmod(str(script), 0o600)
    _rc, _out, checked = run(tmp_path, check=True)
    assert checked["changed"] is True and stat.S_IMODE(os.stat(str(script)).st_mode) == 0o600
    inode = os.stat(str(script)).st_ino
    _rc, _out, fixed = run(tmp_path)
    assert fixed["changed"] is True and stat.S_IMODE(os.stat(str(script)).st_mode) == 0o700
    assert os.stat(str(script)).st_ino == inode          # the content was the same: only the mode changed
    _rc, _out, checked = run(tmp_path, check=True)
    assert checked["changed"] is False


def test_a_directory_at_the_path_is_refused_and_kept(tmp_path):
    (tmp_path / "out" / "resnet.pbs").mkdir(parents=True)
    (tmp_path / "out" / "resnet.pbs" / "mine").write_text("keep")
    rc, out, _result = run(tmp_path)
    assert rc != 0 and "is a directory" in out, out
    assert (tmp_path / "out" / "resnet.pbs" / "mine").read_text() == "keep"
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["resnet.pbs"]    # no temporary file left


@pytest.fixture
def shared():
    """A directory that nobody can reach, holding out/, which nobody can write (no sticky bit)."""
    work = tempfile.mkdtemp(prefix="modak-shared-", dir="/tmp")
    os.chmod(work, 0o755)
    os.mkdir(os.path.join(work, "out"))
    os.chmod(os.path.join(work, "out"), 0o777)
    yield work
    shutil.rmtree(work)


def _victim(work):
    victim = os.path.join(work, "victim")
    with open(victim, "w") as handle:
        handle.write("the playbook user's secret\n")
    os.chmod(victim, 0o600)
    return victim


def test_a_link_swapped_in_before_the_mode_is_set_never_changes_its_target(shared):
    """Finding 1: the script is there with the right content and a wrong mode; at the moment the task would set
    the mode (a chmod on the host, or the placement's own act) the other user swaps in a link to a file of the
    playbook user. A ``chmod`` on PATH does that swap first, as the other user, then runs the real chmod."""
    victim = _victim(shared)
    rc, out, _result = run(shared)
    assert rc == 0, out
    script = os.path.join(shared, "out", SCRIPT)
    os.chmod(script, 0o600)
    bindir = os.path.join(shared, "bin")
    os.mkdir(bindir)
    wrapper = os.path.join(bindir, "chmod")
    with open(wrapper, "w") as handle:
        handle.write("#!/bin/sh\n%s /bin/sh -c 'ln -s %s %s.lnk && mv -f %s.lnk %s' >/dev/null 2>&1\n"
                     "exec %s \"$@\"\n" % (" ".join(OTHER_USER), victim, script, script, script,
                                           shutil.which("chmod")))
    os.chmod(wrapper, 0o755)
    path = "%s:%s:%s" % (bindir, os.path.dirname(sys.executable), os.environ["PATH"])
    run(shared, path=path)
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600
    with open(victim) as handle:
        assert handle.read() == "the playbook user's secret\n"


def test_a_link_to_a_directory_at_the_script_path_is_refused(shared):
    """Finding 2: nothing is moved into the linked directory, nothing is left in the output directory."""
    elsewhere = os.path.join(shared, "elsewhere")
    os.mkdir(elsewhere)
    os.symlink(elsewhere, os.path.join(shared, "out", SCRIPT))
    for _run in range(2):
        rc, out, _result = run(shared)
        assert rc != 0 and "directory" in out, out
    assert os.listdir(elsewhere) == []
    assert os.listdir(os.path.join(shared, "out")) == [SCRIPT]
    assert os.path.islink(os.path.join(shared, "out", SCRIPT))


def test_diff_never_reads_through_a_link(shared):
    """Finding 3: the script's path is a link to a file only the playbook user reads; --diff does not show it."""
    victim = _victim(shared)
    os.symlink(victim, os.path.join(shared, "out", SCRIPT))
    rc, out, result = run(shared, "--diff")
    assert rc == 0, out
    assert "secret" not in out
    assert "not a regular file" in out
    assert result["changed"] is True and not os.path.islink(os.path.join(shared, "out", SCRIPT))
    with open(victim) as handle:
        assert handle.read() == "the playbook user's secret\n"


def test_diff_does_not_block_on_a_fifo(shared):
    """Finding 3: a FIFO at the script's path: the task ends (the FIFO is replaced by the script)."""
    os.mkfifo(os.path.join(shared, "out", SCRIPT))
    try:
        rc, out, result = run(shared, "--diff", timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the optimise task blocked on the FIFO")
    assert rc == 0, out
    assert "not a regular file" in out
    assert result["changed"] is True
    assert stat.S_ISREG(os.lstat(os.path.join(shared, "out", SCRIPT)).st_mode)
