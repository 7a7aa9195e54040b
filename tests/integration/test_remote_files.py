"""Files computed on the controller reach the host through one POSIX shell command (plugin_utils/remote_files.py):
no Python runs on the host for them, the mode is kept as asked, a directory at the path is refused, and a host
without cmp or mktemp gets the file through ansible.legacy.copy's module instead. Real ansible-playbook runs."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import yaml
from helpers import ROOT

ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
EXAMPLE = os.path.join(ROOT, "examples", "tensorflow-xla-gpu-torque.json")


def run(tmp_path, *extra, interpreter=sys.executable, path=None, check=False):
    """ansible-playbook of one optimise task writing tmp_path/out; (returncode, output, the task's result)."""
    book = tmp_path / "book.yml"
    tasks = [{"name": "Optimise", "sodalite.modak.optimise": {"dsl_file": EXAMPLE, "output_dir": str(tmp_path / "out")},
              "register": "optimised"},
             {"name": "Show", "ansible.builtin.debug": {"msg": "RESULT {{ optimised | to_json }}"}}]
    book.write_text(yaml.safe_dump([{"name": "optimise", "hosts": "localhost", "connection": "local",
                                     "gather_facts": False, "vars": {"ansible_python_interpreter": interpreter},
                                     "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_LOCALHOST_WARNING="False")
    if path is not None:
        env["PATH"] = path
    argv = [ANSIBLE_PLAYBOOK, str(book)] + list(extra) + (["--check"] if check else [])
    done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    line = next((ln for ln in done.stdout.splitlines() if '"msg": "RESULT ' in ln), None)
    result = json.loads(json.loads("{%s}" % line.strip())["msg"][len("RESULT "):]) if line else None
    return done.returncode, done.stdout + done.stderr, result


def test_no_python_runs_on_the_host(tmp_path):
    """The host's Python is a path that does not exist: a module would fail, the optimise task writes its script."""
    rc, out, result = run(tmp_path, interpreter="/nonexistent/python3")
    assert rc == 0, out
    assert result["changed"] is True
    script = tmp_path / "out" / "resnet.pbs"
    assert script.read_text() == result["job_script_content"]
    assert stat.S_IMODE(os.stat(str(script)).st_mode) == 0o755
    rc, out, again = run(tmp_path, interpreter="/nonexistent/python3")
    assert rc == 0 and again["changed"] is False, out


def test_a_mode_changed_by_hand_is_put_back_and_check_mode_sees_it(tmp_path):
    run(tmp_path)
    script = tmp_path / "out" / "resnet.pbs"
    os.chmod(str(script), 0o600)
    _rc, _out, checked = run(tmp_path, check=True)
    assert checked["changed"] is True and stat.S_IMODE(os.stat(str(script)).st_mode) == 0o600
    inode = os.stat(str(script)).st_ino
    _rc, _out, fixed = run(tmp_path)
    assert fixed["changed"] is True and stat.S_IMODE(os.stat(str(script)).st_mode) == 0o755
    assert os.stat(str(script)).st_ino == inode          # the content was the same: only the mode changed
    _rc, _out, checked = run(tmp_path, check=True)
    assert checked["changed"] is False


def test_a_directory_at_the_path_is_refused_and_kept(tmp_path):
    (tmp_path / "out" / "resnet.pbs").mkdir(parents=True)
    (tmp_path / "out" / "resnet.pbs" / "mine").write_text("keep")
    rc, out, _result = run(tmp_path)
    assert rc != 0 and "resnet.pbs is a directory" in out, out
    assert (tmp_path / "out" / "resnet.pbs" / "mine").read_text() == "keep"
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["resnet.pbs"]    # no temporary file left


def test_a_host_without_cmp_gets_the_file_through_the_copy_module(tmp_path):
    """PATH holds every command of /usr/bin and /bin but cmp: the copy module writes, idempotently."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for top in ("/usr/bin", "/bin"):
        for name in os.listdir(top):
            if name != "cmp" and not (bindir / name).exists():
                os.symlink(os.path.join(top, name), str(bindir / name))
    path = "%s:%s" % (os.path.dirname(sys.executable), bindir)
    rc, out, result = run(tmp_path, path=path)
    assert rc == 0 and result["changed"] is True, out
    script = tmp_path / "out" / "resnet.pbs"
    assert script.read_text() == result["job_script_content"]
    assert stat.S_IMODE(os.stat(str(script)).st_mode) == 0o755
    rc, out, again = run(tmp_path, path=path)
    assert rc == 0 and again["changed"] is False, out
    rc, out, checked = run(tmp_path, path=path, check=True)
    assert rc == 0 and checked["changed"] is False, out
