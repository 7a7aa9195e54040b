"""The roles' own work with paths another user may control: the build log of container_build (its exact shell,
taken from the task and run by sh) and the work directory of optimised_job."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import jinja2
import pytest
import yaml

from ansible_collections.sodalite.modak.plugins.module_utils import files

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = 100                # users: a group that other users share
OTHER = 2                   # bin: another user


def _load(path):
    with open(os.path.join(ROOT, path)) as handle:
        return yaml.safe_load(handle)


def _tasks(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def build_argv(log, engine_argv):
    """The argv of container_build's build task, evaluated as Ansible would (its expression, the role's vars)."""
    task = next(t for t in _tasks(_load("roles/container_build/tasks/local.yml"))
                if t.get("name", "").startswith("Build asynchronously"))
    expression = task["ansible.builtin.command"]["argv"].strip()
    assert expression.startswith("{{") and expression.endswith("}}")
    role_vars = _load("roles/container_build/vars/main.yml") if os.path.exists(
        os.path.join(ROOT, "roles/container_build/vars/main.yml")) else {}
    evaluate = jinja2.Environment().compile_expression(expression[2:-2])
    return evaluate(container_build_log=log, container_build_plan={"build_argv": engine_argv}, **role_vars)


@pytest.fixture
def shared_dir():
    """A recipe directory another user (bin, through the group users) can write, without the sticky bit."""
    base = tempfile.mkdtemp(prefix="modak-role-", dir="/tmp")
    os.chmod(base, 0o755)
    out = os.path.join(base, "recipes")
    os.mkdir(out)
    os.chown(out, 0, SHARED)
    os.chmod(out, 0o2770)
    yield base, out
    shutil.rmtree(base)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to plant a link as another user")
def test_a_link_planted_at_the_build_logs_name_is_replaced_and_its_target_kept(shared_dir):
    """Another member of the recipe directory's group puts a link at the log's name to a file of the playbook's
    user: before, the build's output overwrote that file (sh's >); now the link is replaced by the log."""
    base, out = shared_dir
    victim = os.path.join(base, "victim")
    with open(victim, "w") as handle:
        handle.write("keep me\n")
    os.chmod(victim, 0o600)
    log = os.path.join(out, "pytorch.build.log")
    subprocess.run(["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % SHARED, "--groups=%d" % SHARED,
                    "ln", "-s", victim, log], check=True)
    argv = build_argv(log, ["sh", "-c", "echo step 1; echo warning >&2; exit 3"])
    done = subprocess.run(argv, cwd=out, capture_output=True, text=True, check=False, timeout=30)
    with open(victim) as handle:
        assert handle.read() == "keep me\n"
    assert done.returncode == 3 and not os.path.islink(log)
    with open(log) as handle:
        assert handle.read() == "step 1\nwarning\n"
    assert sorted(os.listdir(out)) == ["pytorch.build.log"]          # no temporary directory left


def test_the_build_log_is_written_and_the_argv_passes_untouched(tmp_path):
    log = str(tmp_path / "x.build.log")
    done = subprocess.run(build_argv(log, ["printf", "%s|", "a b", "$HOME", "'q'"]), cwd=str(tmp_path),
                          capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0 and (tmp_path / "x.build.log").read_text() == "a b|$HOME|'q'|"


def test_the_work_directory_keeps_its_mode():
    """optimised_job set 0755 on the work directory, an existing one too (a 1777 scratch directory, a 0700 home, a
    2770 project directory). Now no task of the role sets its mode: the placement of the script creates it when
    missing (0755 under the umask) and leaves an existing one as it is."""
    tasks = [t for name in ("main.yml", "build.yml", "stage.yml")
             for t in _tasks(_load("roles/optimised_job/tasks/" + name))]
    for task in tasks:
        for module in ("ansible.builtin.file", "file"):
            args = task.get(module) or {}
            assert not ("optimised_job_dir" in str(args.get("path", "")) and "mode" in args), task["name"]


@pytest.mark.parametrize("mode", [0o1777, 0o700, 0o2770])
def test_placing_the_script_keeps_the_mode_of_an_existing_work_directory(tmp_path, mode):
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(mode)
    files.place(str(work), "job.sbatch", "#!/bin/bash\n", 0o755)
    assert work.stat().st_mode & 0o7777 == mode and (work / "job.sbatch").exists()


def test_the_benchmark_roles_work_directory_is_private_when_made_and_kept_otherwise():
    """The benchmark role created its work directory 0755 (and set 0755 on an existing one) and its plan 0644. Now no
    task of the role sets a directory's mode: the plan's placement (sodalite.modak.output_file) makes the directory
    0700 when missing and leaves an existing one as it is; every file mode the role sets is 0600 or 0700."""
    tasks = list(_tasks(_load("roles/benchmark/tasks/main.yml")))
    for task in tasks:
        for module in ("ansible.builtin.file", "file"):
            assert "state" not in (task.get(module) or {}), task["name"]
    modes = [task[module]["mode"] for task in tasks for module in task
             if isinstance(task[module], dict) and "mode" in task[module]]
    assert modes and set(modes) <= {"0600", "0700"}, modes
    plan = next(t["sodalite.modak.output_file"] for t in tasks if "sodalite.modak.output_file" in t)
    assert plan["output_dir"] == "{{ benchmark_dir }}" and plan["name"] == "configs.json"


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_the_plans_placement_makes_a_missing_work_directory_private(tmp_path, umask):
    old = os.umask(umask)
    try:
        files.place(str(tmp_path / "out" / "benchmark"), "configs.json", "[]\n", 0o600)
    finally:
        os.umask(old)
    assert (tmp_path / "out" / "benchmark").stat().st_mode & 0o7777 == 0o700


def test_the_array_job_script_is_private_and_replaces_a_link(tmp_path):
    """benchmarks/runner.py wrote the job-array script through a link at its path (open, then chmod 0755 by the
    path); now it is a fresh 0700 file renamed over the path."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    target.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir(mode=0o700)
    (work / "configs.json").write_text('[{"threads": 1}]\n')
    os.symlink(str(target), str(work / "benchmark-array.sh"))
    done = subprocess.run([os.path.join(ROOT, ".venv", "bin", "python"), os.path.join(ROOT, "benchmarks", "runner.py"),
                           "--store", str(tmp_path / "bench.sqlite"), "--configs-file", str(work / "configs.json"),
                           "--reps", "1", "--array-job", str(work / "benchmark-array.sh"), "--scheduler", "slurm"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "keep\n" and target.stat().st_mode & 0o777 == 0o600
    script = work / "benchmark-array.sh"
    assert not script.is_symlink() and script.stat().st_mode & 0o777 == 0o700


def _reads_of_the_log(task, log_var):
    """True when the task runs a command or reads a file by the log's name (what follows a link at that name)."""
    for module in ("ansible.builtin.command", "ansible.builtin.shell", "ansible.builtin.slurp",
                   "ansible.builtin.fetch"):
        if module in task and log_var in str(task[module]):
            return True
    return False


def test_the_build_log_is_read_only_through_the_wait_that_never_follows_a_link():
    """container_build read the build log with tail(1) by its name, after the build and in the rescue: another member
    of the directory's group who replaced the log with a link to a file of the playbook's user had its lines shown
    in the play's output. Now the log's end is the wait's own (async_wait's log_tail, tail.last_lines: a regular
    file reached without following a link), 40 lines of it."""
    tasks = list(_tasks(_load("roles/container_build/tasks/local.yml")))
    building = [t for t in tasks if t.get("name", "").startswith("Build asynchronously")]
    assert [t for t in tasks if _reads_of_the_log(t, "container_build_log")] == building   # the build writes it
    wait = next(t["sodalite.modak.async_wait"] for t in tasks if "sodalite.modak.async_wait" in t)
    assert wait["log"] == "{{ container_build_log }}" and wait["log_lines"] >= 15


def test_the_wait_reads_as_many_lines_as_asked_and_nothing_through_a_link(tmp_path, capsys, monkeypatch):
    import json                                               # pylint: disable=import-outside-toplevel
    from ansible.module_utils import basic                  # pylint: disable=import-outside-toplevel
    from ansible.module_utils.common.text.converters import to_bytes    # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.modules import async_wait    # pylint: disable=import-outside-toplevel

    def tail(log, lines):
        args = {"jid": "j1", "log": log, "log_lines": lines}
        monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
        monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
        with pytest.raises(SystemExit):
            async_wait.main()
        return json.loads(capsys.readouterr().out)["log_tail"]

    log = tmp_path / "x.build.log"
    log.write_text("".join("STEP %d/60: RUN make\n" % n for n in range(1, 61)))
    assert tail(str(log), 40) == ["STEP %d/60: RUN make" % n for n in range(21, 61)]
    secret = tmp_path / "secret"
    secret.write_text("token=s3cr3t\n")
    log.unlink()
    os.symlink(str(secret), str(log))
    assert tail(str(log), 40) == []


def test_the_jobs_logs_are_read_from_copies_that_never_follow_a_link():
    """optimised_job's rescue read the build and staging jobs' logs with slurp by their names (slurp follows a
    link: a member of a shared work directory's group could have it show a file of the user's). Now each log is
    copied by sodalite.modak.output_file (opened once, its directories one component at a time, the file without
    following a link) into a private directory, and the copy is read."""
    tasks = list(_tasks(_load("roles/optimised_job/tasks/main.yml")))
    slurps = [t["ansible.builtin.slurp"]["src"] for t in tasks if "ansible.builtin.slurp" in t]
    assert slurps and all(src.startswith("{{ optimised_job_log_copies.path }}/") for src in slurps), slurps
    copy = next(t for t in tasks if "optimised_job_log_copies.path" in str(t.get("sodalite.modak.output_file")))
    assert copy["sodalite.modak.output_file"]["source"] == "{{ item.value }}"


def _template(value, **variables):
    """A task argument as Ansible templates it (a list's items one by one)."""
    if isinstance(value, list):
        return [_template(item, **variables) for item in value]
    environment = jinja2.Environment()
    environment.filters["basename"] = os.path.basename
    return environment.from_string(str(value)).render(**variables)


def stage_on_this_host(work, script):
    """Run optimised_job's staging task on this host as Ansible's command module would: its argv, its standard
    input and its directory, with the role's variables; the staging script ``script`` was placed into ``work``."""
    task = next(t for t in _tasks(_load("roles/optimised_job/tasks/stage.yml"))
                if t.get("name", "").startswith("Stage the image on this host"))["ansible.builtin.command"]
    variables = {"optimised_job_dir": work,
                 "optimised_job_optimised": {"job_script": work + "/train.sbatch", "image_stage": script}}
    stdin = _template(task["stdin"], **variables) if "stdin" in task else None
    if stdin is not None and task.get("stdin_add_newline", True):
        stdin += "\n"
    return subprocess.run(_template(task["argv"], **variables), input=stdin, cwd=_template(task["chdir"], **variables),
                          capture_output=True, text=True, check=False, timeout=30)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_the_staging_script_run_is_the_one_placed_even_when_another_member_renames_a_file_over_it(shared_dir):
    """The role placed the staging script safely, then ran it by its path (`bash <dir>/<job>.stage.sh`), with no
    check of who may change the work directory: in a 2770 project directory another member renamed a file of theirs
    over it and it ran as the playbook's user. Now bash is given the content the role placed on its standard input."""
    _base, work = shared_dir
    script = "#!/bin/bash\nset -eo pipefail\necho 'modak: image staged'\n"
    files.place(work, "train.sbatch.stage.sh", script, 0o700)
    swapped = subprocess.run(["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % SHARED, "--groups=%d" % SHARED, "sh",
                              "-c", 'printf "#!/bin/bash\\necho OTHER CODE\\n" > "$1/.x" && chmod 0755 "$1/.x" && '
                              'mv -f "$1/.x" "$1/train.sbatch.stage.sh"', "sh", work], check=False)
    assert swapped.returncode == 0
    done = stage_on_this_host(work, script)
    assert done.returncode == 0 and done.stdout == "modak: image staged\n", done


def test_a_command_of_the_staging_script_that_reads_its_input_does_not_swallow_the_lines_after_it(tmp_path):
    """The script reaches bash on its standard input: the whole script is read before a line runs, so a command
    that reads its input (here head) finds nothing and every line runs, set -e and the exit status kept."""
    script = "#!/bin/bash\nset -eo pipefail\nhead -c 100 >/dev/null\necho 'modak: image staged'\n"
    done = stage_on_this_host(str(tmp_path), script)
    assert done.returncode == 0 and done.stdout == "modak: image staged\n", done
    done = stage_on_this_host(str(tmp_path), "#!/bin/bash\nset -eo pipefail\nfalse\necho reached\n")
    assert done.returncode == 1 and "reached" not in done.stdout
