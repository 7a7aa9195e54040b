"""What the TOSCA BatchJob deletes is what its create recorded as it made it (modak-created.json through the
created_files module): the job directory (made in one step), the job script, and, in a directory create made,
batch_job's files of the job and the ended job's output. The application's own files and the user's stay, and so
does the directory then. The playbooks' steps run here as submit.yml and cancel.yml run them, with a real local
job (before, delete removed the whole job directory, whatever the job or the user had put there)."""

from __future__ import annotations

import os
import re
import time

import pytest
import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import created
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run
from ansible_collections.sodalite.modak.plugins.modules import created_files

PLAYBOOKS = os.path.join(ROOT, "tosca", "library", "modak", "playbooks")


def module(state, path, **params):
    args = dict(names=[], directory_created=False, make_directory=False, once=False, job_name=None)
    args.update(params, state=state, path=str(path))
    result = created_files.run(args, check_mode=False)
    assert not result.get("failed"), result
    return result


def _outputs(result, job_dir):
    paths = [result.get("stdout_path"), result.get("stderr_path")]
    return sorted(set(os.path.basename(p) for p in paths if p and os.path.dirname(p) == str(job_dir)))


def _ended(job_dir, job_id):
    for _try in range(400):
        if os.path.exists(os.path.join(str(job_dir), ".modak", "%s.rc" % job_id)):
            return
        time.sleep(0.025)
    raise AssertionError("the local job did not end")


def create(work, name, body=""):
    """submit.yml: make the job directory (recorded), check and copy the script (recorded), submit, and in a
    directory create made record batch_job's files and the ended job's outputs."""
    job_dir = work / name
    made = module("present", job_dir, make_directory=True)
    module("check", job_dir, names=[name + ".sh"])
    script = job_dir / (name + ".sh")
    script.write_text("#!/bin/bash\n# modak: local run of job %s\necho done\n%s" % (name, body))
    script.chmod(0o700)
    module("present", job_dir, names=[script.name])
    submitted = run(Request(script=str(script), scheduler="local", chdir=str(job_dir)))
    _ended(job_dir, submitted["job_id"])
    job = run(Request(state="query", job_id=submitted["job_id"], scheduler="local", chdir=str(job_dir)))
    if made["directory_created"]:
        module("present", job_dir / ".modak", names=job["state_files"], directory_created=True)
        if job["active"] is False:
            module("present", job_dir, names=_outputs(job, job_dir))
    return job_dir, job, made


def delete(job_dir, job, made):
    """cancel.yml: cancel (the job has ended), record what the cancel wrote, remove through the records only."""
    cancel = run(Request(state="absent", job_id=job["job_id"], scheduler="local", chdir=str(job_dir)))
    if made["directory_created"]:
        module("present", job_dir / ".modak", names=cancel["state_files"], directory_created=True, once=True)
        module("present", job_dir, names=_outputs(cancel, job_dir), once=True)
    for path in (job_dir / ".modak", job_dir):
        module("absent", path)


def test_delete_removes_the_job_directory_create_made_with_everything_modak_wrote_there(tmp_path):
    job_dir, job, made = create(tmp_path, "fresh")
    assert made["directory_created"] and job["state"] == "COMPLETED"
    assert sorted(job["state_files"]) == sorted(["jobs.json", "jobs.json.lock", "%s.pid" % job["job_id"],
                                                 "%s.rc" % job["job_id"]])
    delete(job_dir, job, made)
    assert not job_dir.exists()


def test_delete_keeps_what_the_application_or_the_user_put_in_the_job_directory(tmp_path):
    job_dir, job, made = create(tmp_path, "train", body="echo weights >model.pt\n")
    (job_dir / "notes.txt").write_text("what I learnt\n")
    (job_dir / ("train.o%s" % job["job_id"])).write_text("the output, annotated by hand\n")
    delete(job_dir, job, made)
    assert sorted(os.listdir(str(job_dir))) == ["model.pt", "notes.txt", "train.o%s" % job["job_id"]]
    assert (job_dir / "model.pt").read_text() == "weights\n"


def test_in_a_directory_that_was_there_before_delete_removes_the_job_script_only(tmp_path):
    thesis = tmp_path / "data" / "thesis.tex"
    thesis.parent.mkdir()
    thesis.write_text("years of work\n")
    job_dir, job, made = create(tmp_path, "data")
    assert not made["directory_created"]
    delete(job_dir, job, made)
    left = sorted(os.listdir(str(job_dir)))
    assert "data.sh" not in left and "thesis.tex" in left and ".modak" in left
    assert thesis.read_text() == "years of work\n"


def _tasks(path):
    def walk(tasks):
        for task in tasks or []:
            yield task
            for key in ("block", "rescue", "always"):
                yield from walk(task.get(key))
    with open(os.path.join(PLAYBOOKS, path)) as handle:
        return [task for play in yaml.safe_load(handle) for task in walk(play.get("tasks"))]


def _module(task):
    return next((key for key in task if key.startswith(("ansible.", "sodalite."))), None)


def test_the_batchjob_playbooks_record_as_they_create_and_delete_through_the_record_only():
    create_tasks = [task for task in _tasks("submit.yml") if _module(task)]
    names = [_module(task) for task in create_tasks]
    assert "ansible.builtin.file" not in names and "ansible.builtin.stat" not in names
    made = names.index("sodalite.modak.created_files")
    assert create_tasks[made]["sodalite.modak.created_files"].get("make_directory") is True
    copy = names.index("ansible.builtin.copy")
    checks = [i for i, task in enumerate(create_tasks) if _module(task) == "sodalite.modak.created_files"
              and task[_module(task)].get("state") == "check"]
    assert checks and checks[0] < copy and create_tasks[copy].get("diff") is False
    assert names[copy + 1] == "sodalite.modak.created_files"            # the script recorded as it is written
    delete_tasks = [task for task in _tasks("cancel.yml") if _module(task)]
    assert not [t for t in delete_tasks if _module(t) in ("ansible.builtin.file", "ansible.builtin.command",
                                                          "ansible.builtin.shell")]
    removing = [t for t in delete_tasks if _module(t) == "sodalite.modak.created_files"
                and t[_module(t)].get("state") == "absent"]
    assert len(removing) == 1 and re.search(r"\.modak", str(removing[0]["loop"]))


def test_a_job_directory_another_user_made_first_is_refused(tmp_path):
    """In a shared work directory another user can make the job directory before create (a stat, then a mkdir
    that finds it there): the script would be copied into their directory, where they can swap it before it is
    submitted. make_directory makes it in one step and refuses one that is not the user's or that others may
    change."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "job").mkdir()
    os.chown(str(work / "job"), 65534, 65534)
    with pytest.raises(OutputError, match="another user"):
        created_files.run(dict(path=str(work / "job"), names=[], directory_created=False, make_directory=True,
                               once=False, job_name=None, state="present"), check_mode=False)
    assert not (work / "job" / created.RECORD).exists()


def test_the_operations_never_show_a_job_script_or_a_dsl_document_in_a_diff():
    """A job script holds the values of application.secrets ({value: ...}) and the DSL document the operations write
    holds them too: with --diff, ansible.builtin.copy showed them in the play's output (and in ansible-runner's
    artifacts). Every copy of the TOSCA operations now runs with diff: false."""
    copies = [task for name in sorted(os.listdir(PLAYBOOKS)) if name.endswith(".yml")
              for task in _tasks(name) if _module(task) == "ansible.builtin.copy"]
    assert len(copies) >= 2 and all(task.get("diff") is False for task in copies), copies
