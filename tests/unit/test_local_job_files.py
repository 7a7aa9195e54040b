"""A local job's state files and output files in work directories that other users may write: batch_job's state
directory is opened and checked once and every state file is read and written through that descriptor (the job's
own shell writes its exit status into that very directory), so a ``.modak`` renamed away and replaced after the
check is never read or written; the job output files are fresh files renamed over their names before the job
begins, so a link another user planted at a name is replaced, never written through. The other user is a real one
(``nobody``, through setpriv); the swap is forced between the check and the use."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from test_created_races import as_nobody, as_root, write

from ansible_collections.sodalite.modak.plugins.module_utils import ledger
from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobOptions
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import local, registry

SECRET = "the user's own notes\n"


@pytest.fixture
def shared(base):
    """(a work directory others may rename in once the job is submitted (0777, as a 2770 directory of a group not
    trusted; a submission there is refused, tests/unit/submit/test_poll.py, so it is the user's alone until then), a
    private 0600 file of the user's outside it, a job script in a directory only the user changes)."""
    work = os.path.join(base, "work")
    os.mkdir(work)
    os.chmod(work, 0o755)
    notes = os.path.join(base, "notes.txt")
    write(notes, SECRET)
    script = os.path.join(base, "job.sh")
    write(script, "#!/bin/bash\nsleep 30\n", 0o700)
    yield work, notes, script
    for state in (".modak", ".modak.moved"):
        for name in os.listdir(os.path.join(work, state)) if os.path.isdir(os.path.join(work, state)) else []:
            if name.endswith(".pid") and name[:-4].isdigit():
                try:
                    os.killpg(int(name[:-4]), signal.SIGKILL)        # the job's sleep
                except OSError:
                    pass


def sticky_job_directory(base, name="work"):
    """(a job directory others may write, sticky (1777, as a 3770 directory of a project group), a private 0600 file
    of the user's beside it that another user would like the job to write into)."""
    work = os.path.join(base, name)
    os.mkdir(work)
    os.chmod(work, 0o1777)
    notes = os.path.join(base, "notes.txt")
    write(notes, SECRET)
    return work, notes


def _replace_state_directory_after_the_check(monkeypatch, work, forge):
    """After batch_job's check of <work>/.modak, another user renames it away and puts their own there with
    ``forge`` (shell, run as them in the new directory)."""
    state = os.path.join(work, ".modak")
    real = ledger.check_directory

    def check_then_swap(directory, create=False):
        real(directory, create)
        as_nobody("cd %s && mv .modak .modak.moved && mkdir .modak && cd .modak && %s" % (work, forge))
        assert os.stat(state).st_uid != 0
    monkeypatch.setattr(ledger, "check_directory", check_then_swap)


@as_root
def test_a_state_directory_replaced_after_its_check_is_never_read(shared, monkeypatch):
    """Before, the query checked .modak and then read the job's files by their paths: the other user's forged pid
    and exit-status files made the running job read COMPLETED, its output a file of theirs choosing (whose last
    lines the query returns)."""
    work, notes, script = shared
    job_id = run(Request(script=script, scheduler="local", chdir=work))["job_id"]
    os.chmod(work, 0o777)
    forged = "printf '%%s\\njob\\n%s\\n\\n\\n' %s >%s.pid && echo 0 >%s.rc" % (notes, job_id, job_id, job_id)
    _replace_state_directory_after_the_check(monkeypatch, work, forged)
    with pytest.raises(SubmitError, match="state directory"):
        result = run(Request(state="query", job_id=job_id, scheduler="local", chdir=work))
        assert result["state"] != "COMPLETED" and SECRET.strip() not in result.get("stdout_tail", [])


@as_root
def test_a_cancel_never_writes_through_a_link_in_a_replaced_state_directory(shared, monkeypatch):
    """Before, the cancel created <id>.cancelled by its path with open(..., "w"): through the other user's link in
    their replacement .modak, the user's own file was emptied."""
    work, notes, script = shared
    job_id = run(Request(script=script, scheduler="local", chdir=work))["job_id"]
    os.chmod(work, 0o777)
    _replace_state_directory_after_the_check(
        monkeypatch, work, "printf '%%s\\njob\\n\\n\\n%s\\n' %s >%s.pid && ln -s %s %s.cancelled"
        % (local.start_time(int(job_id)), job_id, job_id, notes, job_id))
    with pytest.raises(SubmitError, match="state directory"):
        run(Request(state="absent", job_id=job_id, scheduler="local", chdir=work))
    with open(notes) as handle:
        assert handle.read() == SECRET


@as_root
def test_the_jobs_exit_status_goes_to_the_state_directory_checked_at_submission(shared):
    """Before, the job's shell wrote <id>.rc.tmp by the path of .modak when the job ended: a .modak replaced while
    the job ran had it write through the other user's link (the user's file got the exit status)."""
    work, notes, script = shared
    write(script, "#!/bin/bash\nsleep 1.5\n", 0o700)
    job_id = run(Request(script=script, scheduler="local", chdir=work))["job_id"]
    os.chmod(work, 0o777)
    as_nobody("cd %s && mv .modak .modak.moved && mkdir .modak && ln -s %s .modak/%s.rc.tmp"
              % (work, notes, job_id))
    checked = os.path.join(work, ".modak.moved", "%s.rc" % job_id)
    for _attempt in range(200):                      # the job ends: its status is written somewhere
        with open(notes) as handle:
            if os.path.exists(checked) or handle.read() != SECRET:
                break
        time.sleep(0.05)
    with open(notes) as handle:
        assert handle.read() == SECRET
    with open(checked) as handle:
        assert handle.read() == "0\n"


def _next_pids(count):
    """The pids the next processes will most likely get (after the last one given, wrapping at pid_max)."""
    with open("/proc/sys/kernel/ns_last_pid") as handle:
        last = int(handle.read())
    with open("/proc/sys/kernel/pid_max") as handle:
        top = int(handle.read())
    return [n if n < top else n - top + 300 for n in range(last + 1, last + 1 + count)]


@as_root
def test_a_link_planted_at_the_jobs_output_name_is_replaced_never_written_through(base):
    """A sticky job directory others may write (3770 or 1777, accepted by the trust model): before, the wrapper
    opened <name>.o<pid> with the shell's '>', and the other user's links for the coming pids sent the job output
    into the file they named (a 0600 file of the user's)."""
    work, notes = sticky_job_directory(base)
    script = os.path.join(work, "job.sh")
    write(script, "#!/bin/bash\necho the job output\n", 0o700)
    pids = _next_pids(3000)
    as_nobody("/usr/bin/python3 -c 'import os, sys\nfor n in sys.argv[3:]: os.symlink(sys.argv[1], sys.argv[2] + n)' "
              "%s %s %s" % (notes, os.path.join(work, "job.o"), " ".join(map(str, pids))))
    job = run(Request(script=script, scheduler="local", chdir=work, wait=True, poll_interval=0.1, wait_timeout=20))
    assert int(job["job_id"]) in pids, "the pid went past the planted links: run the test again"
    assert job["state"] == "COMPLETED"
    with open(notes) as handle:
        assert handle.read() == SECRET
    output = os.path.join(work, "job.o%s" % job["job_id"])
    assert not os.path.islink(output)
    with open(output) as handle:
        assert handle.read() == "the job output\n"


@as_root
def test_a_link_planted_at_the_output_file_the_script_names_is_replaced_never_written_through(base):
    """A local script that names its output file (job.out): before, its own 'exec >job.out 2>&1' followed the link
    another user put at that name. Now batch_job opens the file for it (a fresh file renamed over the name) and the
    script, seeing that, leaves its output there."""
    work, notes = sticky_job_directory(base)
    script = os.path.join(work, "job.sh")
    redirect = registry.get("local").redirect_lines(JobOptions(stdout="job.out"))
    write(script, "#!/bin/bash\n%s\necho the job output\necho its error >&2\n" % "\n".join(redirect), 0o700)
    as_nobody("ln -s %s %s" % (notes, os.path.join(work, "job.out")))
    job = run(Request(script=script, scheduler="local", chdir=work, wait=True, poll_interval=0.1, wait_timeout=20))
    assert job["state"] == "COMPLETED" and job["stdout_path"] == job["stderr_path"] == os.path.join(work, "job.out")
    with open(notes) as handle:
        assert handle.read() == SECRET
    with open(os.path.join(work, "job.out")) as handle:
        assert handle.read() == "the job output\nits error\n"


def test_a_script_run_by_hand_still_opens_its_own_output(tmp_path):
    """The script leaves its redirection to batch_job only when its parent is the job batch_job started: run by hand
    (even from inside a local job, whose environment says so), it opens its files itself."""
    script = tmp_path / "job.sh"
    lines = registry.get("local").redirect_lines(JobOptions(stdout="job.out", stderr="job.err"))
    script.write_text("#!/bin/bash\n%s\necho out\necho err >&2\n" % "\n".join(lines))
    # as from a local job's script: the variable names the job, the parent of that script, not of this one
    done = subprocess.run(["bash", "-c", 'bash "$0"; true', str(script)], cwd=str(tmp_path), capture_output=True,
                          text=True, check=True, env=dict(os.environ, MODAK_OUTPUT_OPENED=str(os.getpid())))
    assert done.stdout == done.stderr == ""
    assert (tmp_path / "job.out").read_text() == "out\n" and (tmp_path / "job.err").read_text() == "err\n"


def test_the_outputs_the_script_names_are_opened_for_it_and_the_state_is_its_own(tmp_path):
    """A local script naming only its error file: batch_job opens it and <name>.o<id> for the output; a missing
    directory of an output file stops the submission before anything runs."""
    script = tmp_path / "job.sh"
    lines = registry.get("local").redirect_lines(JobOptions(stderr="job.err"))
    script.write_text("#!/bin/bash\n%s\necho out\necho err >&2\n" % "\n".join(lines))
    job = run(Request(script=str(script), scheduler="local", chdir=str(tmp_path), wait=True, poll_interval=0.1,
                      wait_timeout=20))
    assert job["stdout_path"] == str(tmp_path / ("job.o%s" % job["job_id"]))
    assert job["stderr_path"] == str(tmp_path / "job.err")
    assert (tmp_path / ("job.o%s" % job["job_id"])).read_text() == "out\n"
    assert (tmp_path / "job.err").read_text() == "err\n"
    lines = registry.get("local").redirect_lines(JobOptions(stdout="logs/job.out"))
    script.write_text("#!/bin/bash\n%s\ntouch ran\n" % "\n".join(lines))
    with pytest.raises(SubmitError, match="directory of its output .*logs/job.out is missing"):
        run(Request(script=str(script), scheduler="local", chdir=str(tmp_path), force=True))
    time.sleep(0.2)
    assert not (tmp_path / "ran").exists()
    assert not [name for name in os.listdir(str(tmp_path)) if name.endswith(".tmp")]


def test_a_script_written_by_hand_keeps_its_own_redirection_and_the_jobs_directory_its_files(tmp_path):
    """A local script without modak's guard opens its own output: batch_job does not replace a file of the job's
    directory with an empty one of that name (here the script changes directory first and logs elsewhere)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "run.log").write_text("precious results\n")
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ncd %s\nexec >run.log 2>&1\necho logged\n" % elsewhere)
    job = run(Request(script=str(script), scheduler="local", chdir=str(tmp_path), wait=True, poll_interval=0.1,
                      wait_timeout=20))
    assert job["state"] == "COMPLETED", job
    assert (tmp_path / "run.log").read_text() == "precious results\n"
    assert (elsewhere / "run.log").read_text() == "logged\n"


@as_root
def test_a_link_planted_at_the_output_a_script_written_by_hand_opens_stops_the_submission(base):
    """A script without modak's guard opens its own output: in a job directory others may write (sticky), a link
    another user planted at that name would take the job's output; the submission stops before anything runs, and a
    missing name is made empty at submission, so that none can be planted before the script's redirection."""
    work, victim = sticky_job_directory(base)
    script = os.path.join(work, "job.sh")
    write(script, "#!/bin/bash\nexec >out.log 2>&1\necho from-job\n")
    as_nobody("ln -s %s %s/out.log" % (victim, work))
    with pytest.raises(SubmitError, match="out.log is a link that another user may have put there"):
        run(Request(script=script, scheduler="local", chdir=work, wait=True, poll_interval=0.1, wait_timeout=20))
    assert open(victim).read() == SECRET
    os.unlink(os.path.join(work, "out.log"))
    job = run(Request(script=script, scheduler="local", chdir=work, wait=True, poll_interval=0.1, wait_timeout=20))
    assert job["state"] == "COMPLETED" and open(os.path.join(work, "out.log")).read() == "from-job\n"


@as_root
def test_an_output_a_script_written_by_hand_opens_that_has_another_name_stops_the_submission(base):
    """A hard link at the output's name (another user can make one to a file of the user's where the kernel allows
    it) would have the script's redirection empty that file: the submission stops."""
    work, victim = sticky_job_directory(base)
    os.link(victim, os.path.join(work, "out.log"))
    script = os.path.join(work, "job.sh")
    write(script, "#!/bin/bash\nexec >out.log 2>&1\necho from-job\n")
    with pytest.raises(SubmitError, match="out.log is not a regular file of this user's with one name"):
        run(Request(script=script, scheduler="local", chdir=work, wait=True, poll_interval=0.1, wait_timeout=20))
    assert open(victim).read() == SECRET
