"""Exact argv of every scheduler command, table-driven; script directive parsing."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import (
    local, pbs, pbspro, slurm, torque)
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.registry import detect as detect_scheduler
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import digest, elapsed_seconds

S = "/w/job.sh"

ARGV = [
    ("slurm submit", slurm.submit_argv(S, digest="abc"), ["sbatch", "--parsable", "--comment=modak:abc", S]),
    ("slurm submit extra", slurm.submit_argv(S, ["-p", "gpu"], "abc"),
     ["sbatch", "--parsable", "--comment=modak:abc", "-p", "gpu", S]),
    ("slurm check mode", slurm.submit_argv(S, ["-p", "gpu"], "abc", test_only=True),
     ["sbatch", "--test-only", "-p", "gpu", S]),
    ("slurm status", slurm.show_argv("42"), ["scontrol", "show", "job", "-o", "42"]),
    ("slurm accounting", slurm.accounting_argv("42"),
     ["sacct", "-j", "42", "-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"]),
    ("slurm completion log", slurm.accounting_argv("42", completion_log=True),
     ["sacct", "-c", "-j", "42", "-n", "-P", "-X", "-o", "JobID,JobName,State,ExitCode,Elapsed,End"]),
    ("slurm find", slurm.find_argv("train"),
     ["squeue", "--me", "--noheader", "--name=train",
      "--states=PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED,RESIZING", "--format=%i|%k|%T"]),
    ("slurm cancel", slurm.cancel_argv("42"), ["scancel", "42"]),
    ("pbs submit", pbs.submit_argv(S), ["qsub", S]),
    ("pbs submit extra", pbs.submit_argv(S, ["-q", "workq"]), ["qsub", "-q", "workq", S]),
    ("pbspro status", pbspro.status_argv("7.srv"), ["qstat", "-x", "-f", "7.srv"]),
    ("torque status", torque.Torque.status_argv("7.srv"), ["qstat", "-f", "7.srv"]),
    ("pbs cancel", pbs.cancel_argv("7.srv"), ["qdel", "7.srv"]),
    ("local submit", local.submit_argv(S, 5), ["bash", "-c", local.WRAPPER, S, "5", ""]),
    ("local submit, outputs opened", local.submit_argv(S, 5, True), ["bash", "-c", local.WRAPPER, S, "5", "opened"]),
    ("local check mode", local.syntax_argv(S), ["bash", "-n", S]),
]


@pytest.mark.parametrize("name,got,want", ARGV, ids=[a[0] for a in ARGV])
def test_argv(name, got, want):
    assert got == want


def test_local_wrapper_takes_values_only_as_parameters():
    assert "$0" in local.WRAPPER and "/w" not in local.WRAPPER


@pytest.mark.parametrize("text,want", [
    ("#!/bin/bash\n#SBATCH --nodes=1\nsrun x\n", "slurm"),
    ("#!/bin/bash\n#PBS -l select=1:ncpus=4\nx\n", "pbspro"),
    ("#!/bin/bash\n#PBS -l nodes=1:ppn=4\nx\n", "torque"),
    ("#!/bin/bash\necho hi\n#SBATCH --nodes=1\n", "local"),      # directives after a command do not count
    ("#!/bin/bash\n# modak: local run\necho hi\n", "local"),
])
def test_detect_scheduler(text, want):
    assert detect_scheduler(text) == want


@pytest.mark.parametrize("text,extra,want", [
    ("#!/bin/bash\n#SBATCH --job-name=a\n", [], "a"),
    ("#!/bin/bash\n#SBATCH -J b\n", [], "b"),
    ("#!/bin/bash\n#SBATCH --job-name=a\n", ["--job-name=c"], "c"),
    ("#!/bin/bash\n", [], "job.sh"),
])
def test_slurm_job_name(text, extra, want):
    assert slurm.job_name(text, S, extra) == want


@pytest.mark.parametrize("text,want", [("0:0", 0), ("3:0", 3), ("0:9", 137), ("", None), ("x", None)])
def test_slurm_exit_code(text, want):
    assert slurm.exit_code(text) == want


@pytest.mark.parametrize("text,want", [("00:00:05", 5), ("01:02:03", 3723), ("1-00:00:01", 86401), ("02:03", 123),
                                       ("7", 7), ("bad", None), (None, None)])
def test_elapsed(text, want):
    assert elapsed_seconds(text) == want


def test_parse_id_and_show():
    assert slurm.parse_job_id("42;cluster\n") == "42"
    fields = slurm.parse_show("JobId=4 JobName=x JobState=FAILED ExitCode=3:0 StdOut=/w/x-4.out Comment=modak:ab")
    assert (fields["JobState"], fields["ExitCode"], fields["Comment"]) == ("FAILED", "3:0", "modak:ab")


def test_parse_qstat_joins_continuations():
    text = "Job Id: 7.srv\n    Job_Name = run\n    job_state = F\n    Output_Path = login:/home/a/ru\n\tn.o7\n" \
           "    Exit_status = 3\n"
    fields = pbs.parse_qstat(text)
    assert fields["Output_Path"] == "login:/home/a/run.o7" and fields["Exit_status"] == "3"


def test_digest_covers_content_and_arguments():
    assert digest("a") == digest("a")
    assert digest("a") != digest("b")
    assert digest("a", ["-p", "x"]) != digest("a", ["-px"])


def test_local_scripts_declare_their_own_output_files(tmp_path):
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.local import declared_outputs
    script = tmp_path / "a.sh"
    script.write_text("#!/bin/bash\n# modak: local run of job a\nset -eo pipefail\nexec >a.out 2>&1\n./x\n")
    assert declared_outputs(str(script)) == ("a.out", "a.out")
    script.write_text("#!/bin/bash\nexec >logs/a.out 2>a.err\n")
    assert declared_outputs(str(script)) == ("logs/a.out", "a.err")
    script.write_text("#!/bin/bash\necho hi\n")
    assert declared_outputs(str(script)) == (None, None)
    assert declared_outputs(str(tmp_path / "missing.sh")) == (None, None)
    script.write_text('#!/bin/bash\n[ "${MODAK_OUTPUT_OPENED:-}" = "$PPID" ] || exec >a.out 2>&1\n')
    assert declared_outputs(str(script)) == ("a.out", "a.out")
    script.write_text('#!/bin/bash\n[ "${MODAK_OUTPUT_OPENED:-}" = "$PPID" ] || exec 2>a.err\n')
    assert declared_outputs(str(script)) == (None, "a.err")
    script.write_text("#!/bin/bash\nexec 2>&1\n")
    assert declared_outputs(str(script)) == (None, None)


def test_the_digest_is_keyed_by_the_users_own_key(tmp_path, monkeypatch):
    """Hardening, round five, item 12: the digest in Slurm's world-readable --comment (and Grid Engine's context) was
    sha256 of a script that holds secret values: anyone could confirm a guessed secret offline. It is now an
    HMAC with a key of the user's own (0600, made once, in their state directory)."""
    import hashlib
    import os
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import submission
    script = "#!/bin/bash\nexport HF_TOKEN=hf_guessable\n"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "alice"))
    alice = digest(script)
    assert alice != hashlib.sha256(script.encode()).hexdigest()
    key = tmp_path / "alice" / "modak" / "submission.key"
    assert oct(key.stat().st_mode & 0o777) == "0o600" and oct(key.parent.stat().st_mode & 0o777) == "0o700"
    assert digest(script) == alice                                   # one key: the same job is recognised
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "bob"))
    assert digest(script) != alice                                   # another user's key: another digest
    os.chmod(str(key), 0o644)
    submission._KEYS.clear()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "alice"))
    with pytest.raises(SubmitError, match="not this user's private key"):
        digest(script)


def test_processes_that_make_the_key_at_once_all_read_one_whole_key(tmp_path, monkeypatch):
    """A review of the fix: the key was created empty, then written; a second process read it empty in between
    ("too short for a key"), and the hint to remove it changed the key (a duplicate submission)."""
    import multiprocessing
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import submission
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        keys = pool.map(_fresh_key, range(16))
    assert len(set(keys)) == 1 and len(keys[0]) == 2 * submission.KEY_BYTES


def _fresh_key(_index):
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import submission
    submission._KEYS.clear()     # pylint: disable=protected-access
    return submission.user_key().hex()


def test_a_home_that_cannot_be_written_gives_a_clear_error(monkeypatch):
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import submission
    monkeypatch.setenv("XDG_STATE_HOME", "/proc/modak-nowhere")
    submission._KEYS.clear()     # pylint: disable=protected-access
    with pytest.raises(SubmitError, match="cannot make or read the submission key"):
        digest("x")
