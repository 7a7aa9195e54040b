"""container_recipe and container_build_plan through real ansible-playbook runs: they compute on the controller
and transfer only the recipe files (result, check mode, --diff, idempotence, a DSL found like template's src)."""

from __future__ import annotations

import json
import os

from helpers import ROOT
from test_optimise_module import play

PLAYBOOK = os.path.join(ROOT, "tests", "integration", "playbooks", "recipe_task.yml")
EXAMPLE = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")


def run_recipe(tmp_path, *extra, dsl_file=EXAMPLE):
    out, result_file = tmp_path / "recipes", tmp_path / "result.json"
    proc = play(tmp_path, "-e", "output_dir=%s" % out, "-e", "result_file=%s" % result_file,
                "-e", "dsl_file=%s" % dsl_file, *extra, playbook=PLAYBOOK)
    return proc, json.loads(result_file.read_text()), out


def test_recipes_are_written_once_and_the_plan_names_them(tmp_path):
    _proc, first, out = run_recipe(tmp_path)
    recipe = first["recipe"]
    assert recipe["changed"] is True
    assert recipe["recipes"] == {"singularity": str(out / "Singularity.def"), "docker": str(out / "Dockerfile")}
    assert "modak.recipe.sha256=%s" % recipe["recipe_sha256"] in (out / "Dockerfile").read_text().replace('"', "")
    assert oct(os.stat(str(out / "Dockerfile")).st_mode & 0o777) == "0o644"
    plan = first["plan"]
    assert plan["changed"] is False
    assert plan["build_argv"][:2] == ["podman", "build"] and str(out / "Dockerfile") in plan["build_argv"]
    mtime = os.stat(str(out / "Dockerfile")).st_mtime_ns
    _proc, second, _out = run_recipe(tmp_path)
    assert second["recipe"]["changed"] is False
    assert os.stat(str(out / "Dockerfile")).st_mtime_ns == mtime


def test_check_mode_writes_nothing_and_diff_shows_the_recipe(tmp_path):
    proc, data, out = run_recipe(tmp_path, "--check", "--diff")
    assert data["recipe"]["changed"] is True
    assert not out.exists()
    assert "+FROM " in proc.stdout or "+From: " in proc.stdout


def test_a_relative_dsl_file_is_found_next_to_the_playbook(tmp_path):
    """dsl_file is read on the controller: a relative one is found as template finds its src."""
    book_dir = tmp_path / "book"
    (book_dir / "files").mkdir(parents=True)
    (book_dir / "files" / "job.yaml").write_text(open(EXAMPLE, encoding="utf-8").read())
    book = book_dir / "recipe.yml"
    book.write_text(open(PLAYBOOK, encoding="utf-8").read())
    out, result_file = tmp_path / "recipes", tmp_path / "result.json"
    play(tmp_path, "-e", "output_dir=%s" % out, "-e", "result_file=%s" % result_file, "-e", "dsl_file=job.yaml",
         playbook=str(book))
    assert json.loads(result_file.read_text())["recipe"]["changed"] is True
    assert (out / "Dockerfile").is_file()
