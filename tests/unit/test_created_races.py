"""What modak deletes, and the state batch_job keeps, in directories that others may change: every removal works
from one descriptor of the directory, opened once, never through a path whose directories may have changed since
the check (the swap forced by a hook between the check and the removal); a record, or a state directory, that
another real user (``nobody``, through setpriv) put there first is refused."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import created, gitops
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError, SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                             reason="needs root and setpriv to act as another user")


def as_nobody(script):
    done = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                           "bash", "-c", script], capture_output=True, text=True, check=False, timeout=30,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/"})
    assert done.returncode == 0, done.stderr


def write(path, text, mode=0o600):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def swap_at_removal(monkeypatch, directory, elsewhere):
    """At the first removal (os.unlink), after every check: ``directory`` is renamed away and a link to
    ``elsewhere`` put at its name, as another user who can write its parent may do."""
    real = os.unlink
    done = []

    def unlink(*args, **kwargs):
        if not done:
            done.append(True)
            os.rename(directory, directory + ".old")
            os.symlink(elsewhere, directory)
        return real(*args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)


def test_a_directory_swapped_for_a_link_before_the_removal_never_costs_a_file_elsewhere(base, monkeypatch):
    """Before, the recorded file was checked in the directory, then removed by its path: a link swapped in between
    made the delete remove the same-named file of the directory the link points to."""
    shared = os.path.join(base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)                                   # others may rename in it
    out, private = os.path.join(shared, "out"), os.path.join(base, "private")
    os.mkdir(out, 0o700)
    os.mkdir(private, 0o700)
    write(os.path.join(out, "job.sh"), "#!/bin/bash\necho modak\n")
    created.record(out, ["job.sh"], directory_created=True)
    write(os.path.join(private, "job.sh"), "#!/bin/bash\necho the user's own\n")
    swap_at_removal(monkeypatch, out, private)
    try:
        created.remove(out)
    except OSError:
        pass
    with open(os.path.join(private, "job.sh")) as handle:
        assert handle.read() == "#!/bin/bash\necho the user's own\n"
    assert not os.path.exists(os.path.join(out + ".old", "job.sh"))      # the file checked is the file removed


def test_prune_removes_from_the_directory_it_checked(tmp_path, monkeypatch):
    out, private = tmp_path / "jobs", tmp_path / "private"
    out.mkdir()
    private.mkdir()
    text = "#!/bin/bash\n#SBATCH --job-name=old\n"
    write(str(out / "old.sbatch"), text)
    write(str(private / "old.sbatch"), "#!/bin/bash\n# the user's own\n")
    manifest = {"old.sbatch": {"dsl": "../dsl/gone.json", "sha256": hashlib.sha256(text.encode()).hexdigest()}}
    swap_at_removal(monkeypatch, str(out), str(private))
    removed = gitops.prune(str(out), manifest, [("old.sbatch", "its DSL is gone", True)])
    assert removed == ["old.sbatch"] and (private / "old.sbatch").read_text() == "#!/bin/bash\n# the user's own\n"
    assert not (tmp_path / "jobs.old" / "old.sbatch").exists()


@as_root
def test_a_record_another_user_planted_in_a_sticky_directory_is_refused(base):
    """In a sticky shared directory (1777) another user cannot remove the user's files, but could write a record
    listing one of them with its hash: before, the delete removed the user's file."""
    scratch = os.path.join(base, "scratch")
    os.mkdir(scratch)
    os.chmod(scratch, 0o1777)
    results = os.path.join(scratch, "results.h5")
    write(results, "months of runs\n", 0o644)
    digest = hashlib.sha256(b"months of runs\n").hexdigest()
    record = json.dumps({"directory_created": False, "files": {"results.h5": digest}})
    as_nobody("printf '%%s' '%s' >%s" % (record, os.path.join(scratch, created.RECORD)))
    with pytest.raises(OutputError, match="modak did not write it"):
        created.remove(scratch)
    with open(results) as handle:
        assert handle.read() == "months of runs\n"


@as_root
@pytest.mark.parametrize("planted", ["mkdir -m 0777 {state}", "mkdir -m 0777 {scratch}/theirs && ln -s theirs {state}"])
def test_a_state_directory_another_user_made_first_in_a_shared_work_directory_is_refused(base, planted):
    """batch_job keeps a local job's pid and exit status, and its ledger, in <chdir>/.modak, written by their names.
    In a 1777 scratch work directory another user could make .modak first (or a link there): before, the job's
    state was written into their directory, where they could plant links for it to write through and forge the
    job's exit status; now the submission stops before anything is written there."""
    scratch = os.path.join(base, "scratch")
    os.mkdir(scratch)
    os.chmod(scratch, 0o1777)
    state = os.path.join(scratch, ".modak")
    as_nobody(planted.format(state=state, scratch=scratch))
    script = os.path.join(base, "job.sh")
    write(script, "#!/bin/bash\ntrue\n", 0o700)
    with pytest.raises(SubmitError, match="state directory"):
        run(Request(script=script, scheduler="local", chdir=scratch))
    assert os.listdir(state) == []


def test_batch_jobs_state_directory_is_made_private(tmp_path):
    old = os.umask(0)
    try:
        script = tmp_path / "job.sh"
        write(str(script), "#!/bin/bash\ntrue\n", 0o700)
        run(Request(script=str(script), scheduler="local", chdir=str(tmp_path)))
    finally:
        os.umask(old)
    assert (tmp_path / ".modak").stat().st_mode & 0o777 == 0o700
