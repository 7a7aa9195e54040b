"""What modak deletes is only what it created: the TOSCA optimiser's create refuses to overwrite a user's DSL
document or job script, records what it wrote (modak-created.json, with the content's hash), and its delete
removes only that. The playbooks' decisions are the created_files module's, run here as the playbooks run it."""

from __future__ import annotations

import json
import os

import yaml
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import created
from ansible_collections.sodalite.modak.plugins.modules import created_files

PLAYBOOKS = os.path.join(ROOT, "tosca", "library", "modak", "playbooks")


def module(state, path, **params):
    return created_files.run(dict(dict(names=[], directory_created=False, job_name=None), state=state,
                                  path=str(path), **params), check_mode=False)


def create(out, job="job", script_text="#!/bin/bash\n"):
    """The TOSCA create's steps: check, write the DSL, record it; the optimise playbook writes the script; record."""
    existed = out.exists()
    check = module("check", out, names=[job + ".dsl.yaml"], job_name=job)
    if check.get("failed"):
        return check
    out.mkdir(mode=0o700, exist_ok=True)
    (out / (job + ".dsl.yaml")).write_text("job: {}\n")
    module("present", out, names=[job + ".dsl.yaml"], directory_created=not existed)
    (out / (job + ".sbatch")).write_text(script_text)
    if job + ".sbatch" not in check["theirs"]:
        module("present", out, names=[job + ".sbatch"])
    return check


def test_create_refuses_to_overwrite_the_users_dsl_document(tmp_path):
    (tmp_path / "job.dsl.yaml").write_text("my own notes\n")
    result = create(tmp_path)
    assert result["failed"] and "job.dsl.yaml" in result["msg"]
    assert (tmp_path / "job.dsl.yaml").read_text() == "my own notes\n"


def test_create_refuses_to_overwrite_the_users_job_script(tmp_path):
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n# mine\n")
    result = create(tmp_path)
    assert result["failed"] and "job.sbatch" in result["msg"]
    assert not (tmp_path / "job.dsl.yaml").exists()


def test_delete_removes_only_what_create_wrote(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work\n")
    assert not create(tmp_path).get("failed")
    done = module("absent", tmp_path)
    removed = sorted(os.path.basename(p) for p in done["removed"])
    assert removed == ["job.dsl.yaml", "job.sbatch", "modak-created.json"]
    assert sorted(os.listdir(str(tmp_path))) == ["thesis.tex"]


def test_delete_removes_the_directory_create_made_and_keeps_an_edited_file(tmp_path):
    out = tmp_path / "out"
    create(out)
    assert stat_mode(out) == 0o700
    assert not module("absent", out)["kept"] and not out.exists()
    create(out)
    (out / "job.sbatch").write_text("#!/bin/bash\n# edited by hand\n")
    done = module("absent", out)
    assert done["kept"] == [str(out / "job.sbatch")] and os.listdir(str(out)) == ["job.sbatch"]


def test_a_second_create_keeps_its_own_files_recorded(tmp_path):
    create(tmp_path)
    assert not create(tmp_path, script_text="#!/bin/bash\n# another choice\n").get("failed")
    record = json.loads((tmp_path / created.RECORD).read_text())
    assert sorted(record["files"]) == ["job.dsl.yaml", "job.sbatch"] and record["directory_created"] is False
    module("absent", tmp_path)
    assert os.listdir(str(tmp_path)) == []


def test_the_playbooks_decide_through_the_record():
    with open(os.path.join(PLAYBOOKS, "optimise.yml")) as handle:
        create_tasks = [task for play in yaml.safe_load(handle) for task in play.get("tasks", [])]
    names = [next(key for key in task if key.startswith(("ansible.", "sodalite."))) for task in create_tasks]
    assert names.index("sodalite.modak.created_files") < names.index("ansible.builtin.copy")
    with open(os.path.join(PLAYBOOKS, "optimise_delete.yml")) as handle:
        delete_tasks = [task for play in yaml.safe_load(handle) for task in play["tasks"]]
    assert [t["sodalite.modak.created_files"]["state"] for t in delete_tasks if "sodalite.modak.created_files" in t] \
        == ["absent"]
    assert not any("ansible.builtin.file" in task for task in delete_tasks)


def stat_mode(path):
    return os.stat(str(path)).st_mode & 0o777


def test_a_delete_keeps_another_creates_files_in_a_shared_directory(tmp_path):
    """Two optimiser nodes share an output directory: deleting A removes A's DSL and script only; B's stay, and stay
    recorded, so that B's delete removes them later (and the directory, once empty)."""
    directory = str(tmp_path / "shared")
    os.mkdir(directory)
    for name in ("a.dsl.yaml", "a.sbatch", "b.dsl.yaml", "b.sbatch"):
        with open(os.path.join(directory, name), "w") as handle:
            handle.write(name)
    created.record(directory, ["a.dsl.yaml", "a.sbatch"], True)
    created.record(directory, ["b.dsl.yaml", "b.sbatch"], False)
    removed, kept = created.remove(directory, ["a.dsl.yaml", "a.sbatch"])
    assert sorted(os.path.basename(p) for p in removed) == ["a.dsl.yaml", "a.sbatch"] and kept == []
    assert sorted(os.listdir(directory)) == ["b.dsl.yaml", "b.sbatch", created.RECORD]
    assert sorted(created.load(directory)["files"]) == ["b.dsl.yaml", "b.sbatch"]
    removed, kept = created.remove(directory, ["b.dsl.yaml", "b.sbatch"])
    assert not os.path.exists(directory)
