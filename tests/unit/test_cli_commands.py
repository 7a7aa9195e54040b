"""The modak command in process: -o -, help and exit statuses, shell completion, bin/modak's Python, and the job
commands (submit, status, cancel, logs) on real local jobs through the batch_job module's job control."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import time

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import cli, dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import embedded

PYTORCH = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")
SHELLCHECK = shutil.which("shellcheck") or os.path.join(ROOT, ".venv", "bin", "shellcheck")


def modak(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- -o -

def test_output_dash_prints_the_script_and_makes_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = modak("optimise", PYTORCH, "-o", "-")
    assert status == 0, err
    assert out == pipeline.optimise(dsl.load_file(PYTORCH), embedded()).script.text
    assert os.listdir(str(tmp_path)) == []
    assert "pytorch-cpu-slurm.yaml:" in err


def test_output_dash_in_json_carries_the_script(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _err = modak("optimise", "--format", "json", PYTORCH, "-o", "-")
    assert status == 0
    entry = json.loads(out)["files"][0]
    assert entry["job_script"] == "-" and entry["script"].startswith("#!")
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.parametrize("argv", [["optimise", PYTORCH, PYTORCH, "-o", "-"],
                                  ["optimise", PYTORCH, "-o", "-", "--check"], ["recipe", PYTORCH, "-o", "-"]])
def test_output_dash_prints_one_file_only(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _out, err = modak(*argv)
    assert status == 2 and "-o -" in err
    assert os.listdir(str(tmp_path)) == []


def test_recipe_output_dash_prints_the_one_recipe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _err = modak("recipe", PYTORCH, "-o", "-", "--recipe-format", "docker")
    assert status == 0 and out.startswith(("FROM", "#", "ARG", "# syntax"))
    assert "FROM " in out and os.listdir(str(tmp_path)) == []


# ---------------------------------------------------------------- help and exit statuses

def _parsers(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_positional_and_option_has_help():
    for parser in _parsers(cli._parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help != argparse.SUPPRESS, (parser.prog, action.dest)


def test_help_lists_every_exit_status(capsys):
    assert cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    for code in (cli.OK, cli.INVALID, cli.USAGE, cli.CHANGED, cli.JOB_FAILED):
        assert "\n  %d  " % code in text
    assert cli.main(["submit", "--help"]) == 0
    assert "\n  4  a job ended" in capsys.readouterr().out


# ---------------------------------------------------------------- completion

def test_bash_completion_is_valid_and_names_every_command_and_option(tmp_path):
    status, out, _err = modak("completion", "bash")
    assert status == 0
    path = tmp_path / "modak.bash"
    path.write_text(out)
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=30)
    done = subprocess.run([SHELLCHECK, "-s", "bash", str(path)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout
    for parser in _parsers(cli._parser()):
        for action in parser._actions:
            for option in action.option_strings:
                assert option in out, option
    for command in ("validate", "optimise", "recipe", "submit", "status", "cancel", "logs", "completion"):
        assert "        %s)" % command in out


def test_bash_completion_completes_commands_and_option_words(tmp_path):
    _status, out, _err = modak("completion", "bash")
    path = tmp_path / "modak.bash"
    path.write_text(out)

    def complete(*words):
        line = 'source %s; COMP_WORDS=(modak %s); COMP_CWORD=%d; _modak; printf "%%s\\n" "${COMPREPLY[@]}"' % (
            path, " ".join("'%s'" % w for w in words), len(words))
        return subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=30,
                              check=True).stdout.split()

    assert complete("st") == ["status"]
    assert complete("submit", "--scheduler", "p") == ["pbspro"]
    assert complete("logs", "--fo") == ["--follow", "--format"]


# ---------------------------------------------------------------- bin/modak's Python

def _checkout(tmp_path, venv):
    bin_dir = tmp_path / "checkout" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "bin", "modak"), str(bin_dir / "modak"))
    fake = tmp_path / "fakes"
    fake.mkdir()
    pythons = [("python3", fake)] + ([("python", tmp_path / "checkout" / ".venv" / "bin")] if venv else [])
    for name, where in pythons:
        where.mkdir(parents=True, exist_ok=True)
        (where / name).write_text('#!/bin/sh\necho "%s $*"\n' % where.name)
        (where / name).chmod(0o755)
    return str(bin_dir / "modak"), dict(os.environ, PATH="%s:/usr/bin:/bin" % fake)


def test_bin_modak_runs_the_checkouts_venv_python(tmp_path):
    script, env = _checkout(tmp_path, venv=True)
    env.pop("MODAK_PYTHON", None)
    out = subprocess.run(["sh", script, "--version"], env=env, capture_output=True, text=True, timeout=30,
                         check=False).stdout
    assert out.split() == ["bin", script, "--version"], out             # .venv/bin/python ran
    link = tmp_path / "modak-link"
    os.symlink(script, str(link))
    out = subprocess.run([str(link), "--version"], env=env, capture_output=True, text=True, timeout=30,
                         check=False).stdout
    assert out.split()[0] == "bin", out                                  # through a link too
    env["MODAK_PYTHON"] = str(tmp_path / "fakes" / "python3")
    out = subprocess.run(["sh", script, "--version"], env=env, capture_output=True, text=True, timeout=30,
                         check=False).stdout
    assert out.split()[0] == "fakes", out                                # $MODAK_PYTHON wins


def test_bin_modak_without_a_venv_runs_python3(tmp_path):
    script, env = _checkout(tmp_path, venv=False)
    env.pop("MODAK_PYTHON", None)
    out = subprocess.run(["sh", script, "--version"], env=env, capture_output=True, text=True, timeout=30,
                         check=False).stdout
    assert out.split()[0] == "fakes", out


# ---------------------------------------------------------------- submit, status, cancel, logs: real local jobs

def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/bash\n" + body)
    return str(path)


def test_submit_then_status_wait_then_logs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, "hello.sh", "echo first\necho second\n")
    status, out, err = modak("submit", "--scheduler", "local", script)
    assert status == 0, err
    job_id = out.strip()
    assert job_id.isdigit()
    status, out, err = modak("status", "--wait", "--poll-interval", "1", job_id)     # scheduler from the ledger
    assert (status, out) == (0, "COMPLETED\n"), err
    status, out, err = modak("logs", job_id)
    assert (status, out) == (0, "first\nsecond\n"), err
    status, out, _err = modak("logs", "-n", "1", "--format", "json", job_id)
    report = json.loads(out)
    assert report["lines"] == ["second"] and report["state"] == "COMPLETED"
    assert report["path"] == str(tmp_path / ("hello.o%s" % job_id))


def test_submit_wait_of_a_failing_job_exits_4_with_its_state(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, "bad.sh", "echo oops\nexit 3\n")
    status, out, err = modak("submit", "--scheduler", "local", "--wait", "--poll-interval", "1", script)
    assert status == 4 and out.strip().isdigit(), err
    assert "ended FAILED with exit code 3" in err and "oops" in err
    status, out, _err = modak("status", out.strip())
    assert (status, out) == (4, "FAILED\n")


def test_cancel_a_running_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, "long.sh", "echo started\nsleep 60\n")
    _status, out, _err = modak("submit", "--scheduler", "local", script)
    job_id = out.strip()
    assert modak("status", job_id)[:2] == (0, "RUNNING\n")
    status, out, err = modak("cancel", "--wait", "--poll-interval", "1", job_id)
    assert status == 0 and "cancelled (CANCELLED)" in out, err
    assert modak("status", job_id)[:2] == (4, "CANCELLED\n")
    assert "has already ended" in modak("cancel", job_id)[1]


def test_logs_follow_prints_the_output_as_it_grows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, "slow.sh", "echo one\nsleep 2\necho two\nprintf three\n")
    _status, out, _err = modak("submit", "--scheduler", "local", script)
    status, out, err = modak("logs", "--follow", "--poll-interval", "1", out.strip())
    assert status == 0, err
    assert out == "one\ntwo\nthree\n"


def test_submit_a_dsl_optimises_then_submits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "hello.yaml"
    doc.write_text("job:\n  job_options: {job_name: hello}\n  application: {executable: echo, arguments: hi}\n"
                   "  target: {job_scheduler_type: local}\n")
    status, out, err = modak("submit", "--wait", "--poll-interval", "1", "-o", "jobs", str(doc))
    assert status == 0, err
    assert (tmp_path / "jobs" / "hello.sh").is_file()
    assert modak("logs", out.strip())[1] == "hi\n"


def test_submit_of_a_dsl_never_overwrites_a_script_modak_did_not_write(tmp_path, monkeypatch):
    """The user's own hello.sh in the output directory stays; a script modak wrote there is rewritten."""
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "hello.yaml"
    doc.write_text("job:\n  job_options: {job_name: hello}\n  application: {executable: echo, arguments: hi}\n"
                   "  target: {job_scheduler_type: local}\n")
    mine = tmp_path / "hello.sh"
    mine.write_text("#!/bin/bash\necho my own\n")
    status, _out, err = modak("submit", str(doc))
    assert status == 2 and "modak did not write it" in err
    assert mine.read_text() == "#!/bin/bash\necho my own\n"
    status, _out, err = modak("submit", "--wait", "--poll-interval", "1", "-o", "jobs", str(doc))
    assert status == 0, err
    doc.write_text(doc.read_text().replace("arguments: hi", "arguments: again"))
    status, _out, err = modak("submit", "--wait", "--poll-interval", "1", "-o", "jobs", str(doc))
    assert status == 0, err
    assert "again" in (tmp_path / "jobs" / "hello.sh").read_text()


def test_status_of_an_unknown_job_names_what_to_give(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _out, err = modak("status", "12345")
    assert status == 2 and "--scheduler" in err
    status, _out, err = modak("submit", str(tmp_path / "bad.yaml"))
    assert status == 2


def test_submit_of_an_invalid_dsl_exits_1_with_its_problems(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = tmp_path / "bad.yaml"
    doc.write_text("job:\n  application: {executable: echo}\n  target: {job_scheduler_type: slurmm}\n")
    status, out, _err = modak("submit", str(doc))
    assert status == 1 and "job.target.job_scheduler_type" in out
    assert not os.path.exists(str(tmp_path / ".modak"))


def test_status_wait_polls_with_batch_jobs_backoff(tmp_path, monkeypatch):
    """The wait is job_control.Job.follow's: the pause starts at 1 s and doubles up to --poll-interval."""
    from ansible_collections.sodalite.modak.plugins.module_utils import job_control
    asked = []

    class Clock(object):
        @staticmethod
        def time():
            return time.time()

        @staticmethod
        def sleep(seconds):
            asked.append(seconds)
            time.sleep(0.4)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(job_control.Job, "clock", Clock)
    _status, out, _err = modak("submit", "--scheduler", "local", _script(tmp_path, "nap.sh", "sleep 2\n"))
    status, out, err = modak("status", "--wait", "--poll-interval", "3", out.strip())
    assert (status, out) == (0, "COMPLETED\n"), err
    assert asked[:3] == [1.0, 2.0, 3.0] and len(err.splitlines()) == len(asked)    # one line per poll


# ---------------------------------------------------------------- hardening, round five (items 7, 8)

def _recording_sbatch(tmp_path, monkeypatch):
    """A sbatch on PATH that records its arguments: what would have reached the scheduler."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\necho \"$@\" >> %s/sbatch.args\necho 7\n"
                                    % tmp_path)
    (bin_dir / "sbatch").chmod(0o755)
    # what the submission asks after sbatch: the job queued (no real controller answers here)
    (bin_dir / "scontrol").write_text("#!/bin/sh\necho 'JobId=7 JobName=j UserId=me(%d) JobState=PENDING "
                                      "ExitCode=0:0'\n" % os.geteuid())
    (bin_dir / "squeue").write_text("#!/bin/sh\nexit 0\n")
    for name in ("scontrol", "squeue"):
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    return tmp_path / "sbatch.args"


@pytest.mark.parametrize("word", ["--output=/etc/cron.d/x", "--uid=0", "--wrap=id", "high", "-o/tmp/x", "-e",
                                  "--export=ALL,LD_PRELOAD=/tmp/x.so", "--comment=modak:forged"])
def test_submit_extra_args_pass_the_schedulers_allow_list(word, tmp_path, monkeypatch):
    """`modak submit --extra-arg` was passed to sbatch as given, though --help and docs/cli.md said the allow-list
    applied (--extra-arg=--output=/etc/cron.d/x --extra-arg=--uid=0 reached sbatch)."""
    monkeypatch.chdir(tmp_path)
    recorded = _recording_sbatch(tmp_path, monkeypatch)
    script = _script(tmp_path, "job.sbatch", "#SBATCH --job-name=j\necho hi\n")
    status, _out, err = modak("submit", "--scheduler", "slurm", "--extra-arg=%s" % word, script)
    assert status != 0 and "--extra-arg=%s" % word in err, err
    assert not recorded.exists()


def test_submit_extra_args_of_the_allow_list_reach_sbatch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recorded = _recording_sbatch(tmp_path, monkeypatch)
    script = _script(tmp_path, "job.sbatch", "#SBATCH --job-name=j\necho hi\n")
    status, out, err = modak("submit", "--scheduler", "slurm", "--extra-arg=--qos=high", "--extra-arg=--time=10",
                             "--extra-arg=--exclusive", script)
    assert (status, out.strip()) == (0, "7"), err
    assert "--qos=high --time=10 --exclusive" in recorded.read_text()


@pytest.mark.parametrize("command", [["cancel"], ["status"], ["logs"]])
@pytest.mark.parametrize("job_id", ["--user=someone", "-1", "1;id", "1 2", ""])
def test_a_job_id_that_no_scheduler_gives_reaches_no_command(command, job_id, tmp_path, monkeypatch):
    """`modak cancel --scheduler slurm -- --user=NAME` ran `scancel --user=NAME` (and batch_job state=absent with a
    job_id from a ticket did the same)."""
    monkeypatch.chdir(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("scancel", "squeue", "scontrol", "sacct"):
        (bin_dir / name).write_text("#!/bin/sh\necho \"$@\" >> %s/ran\n" % tmp_path)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    status, _out, err = modak(*(command + ["--scheduler", "slurm", "--", job_id]))
    assert status != 0 and "is not one a scheduler gives" in err, err
    assert not (tmp_path / "ran").exists()
