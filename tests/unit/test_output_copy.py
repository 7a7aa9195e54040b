"""The copy of a job's output that optimised_job fetches (files.place_from, the output_file module's source): the
output is read only as a regular file reached without a link the job (another user) could have made, the file's
own name or a directory of its path. Root reads what a job of uid 1 wrote, as a play with become does."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
import yaml

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError

JOB = 1                  # daemon: the job's user
SECRET = "root:$6$hash:19000::::::\n"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to read as someone else than the job's user")


@pytest.fixture
def base():
    path = pathlib.Path(tempfile.mkdtemp(prefix="modak-copy-", dir="/tmp"))
    path.chmod(0o755)
    private = path / "private"
    private.mkdir(mode=0o700)
    (private / "job.out").write_text(SECRET)
    (private / "job.out").chmod(0o600)
    work = path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "job.out").write_text("step 1\n")
    for item in (work, work / "sub", work / "sub" / "job.out"):
        os.chown(str(item), JOB, JOB)
    (path / "copies").mkdir(mode=0o700)
    yield path
    shutil.rmtree(str(path))


def as_job(base, script):
    subprocess.run(["setpriv", "--reuid=%d" % JOB, "--regid=%d" % JOB, "--clear-groups", "sh", "-c", script,
                    str(base)], check=True)


def test_the_jobs_output_is_copied(base):
    source = str(base / "work" / "sub" / "job.out")
    assert files.place_from(str(base / "copies"), "output-0", source, 0o600) == files.CHANGED
    assert (base / "copies" / "output-0").read_text() == "step 1\n"
    assert oct((base / "copies" / "output-0").stat().st_mode & 0o777) == oct(0o600)
    assert files.place_from(str(base / "copies"), "output-1", str(base / "work" / "absent"), 0o600) is None


def test_a_directory_the_job_turns_into_a_link_is_not_copied(base):
    """The job turns sub/ into a link to a directory holding a file only root may read: nothing is copied."""
    as_job(base, 'rm -r "$0/work/sub" && ln -s "$0/private" "$0/work/sub"')
    with pytest.raises(OutputError, match="is a link in a directory that other users can change"):
        files.place_from(str(base / "copies"), "output-0", str(base / "work" / "sub" / "job.out"), 0o600)
    assert os.listdir(str(base / "copies")) == []


def test_an_output_that_is_a_link_is_not_copied(base):
    as_job(base, 'rm "$0/work/sub/job.out" && ln -s "$0/private/job.out" "$0/work/sub/job.out"')
    with pytest.raises(OutputError, match="not a regular file"):
        files.place_from(str(base / "copies"), "output-0", str(base / "work" / "sub" / "job.out"), 0o600)
    assert os.listdir(str(base / "copies")) == []


def _tasks(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def test_the_role_fetches_only_the_copy():
    """optimised_job fetched the output's own path after looking at its last component (stat, follow: false), so a
    directory of the path turned into a link was followed; now fetch takes only what output_file copied."""
    with open(os.path.join(ROOT, "roles/optimised_job/tasks/main.yml")) as handle:
        tasks = list(_tasks(yaml.safe_load(handle)))
    fetches = [t["ansible.builtin.fetch"] for t in tasks if "ansible.builtin.fetch" in t]
    copies = [t for t in tasks if t.get("sodalite.modak.output_file", {}).get("source")]
    assert fetches and copies and all(f["src"] == "{{ item.path }}" for f in fetches)
    fetched = [t["loop"] for t in tasks if "ansible.builtin.fetch" in t][0]
    assert any(copy.get("register") and copy["register"] in fetched for copy in copies)


def test_the_output_file_module_copies_a_source(base):
    from ansible_collections.sodalite.modak.plugins.modules import output_file

    class Module(object):
        check_mode, _diff = False, False
        params = dict(output_dir=str(base / "copies"), name="output-0", content=None, mode="0600",
                      source=str(base / "work" / "sub" / "job.out"))

    assert output_file.run(Module())["placed"] == files.CHANGED
    assert (base / "copies" / "output-0").read_text() == "step 1\n"
    Module.params = dict(Module.params, source=str(base / "work" / "none"), name="output-1")
    assert output_file.run(Module()) == dict(changed=False, path=str(base / "copies" / "output-1"), placed="missing")
