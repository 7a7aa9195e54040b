"""The modak command, run for real in a subprocess: exit status, output, files, and the same core as the modules."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml
from helpers import EXAMPLES, ROOT, dump

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline

MODAK = os.path.join(ROOT, "bin", "modak")
PYTORCH = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")


def _env():
    env = dict(os.environ, LC_ALL="C")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def modak(*args, cwd=None, command=MODAK):
    return subprocess.run([command] + list(args), capture_output=True, text=True, cwd=cwd, env=_env(), check=False,
                          timeout=120)


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(dump({"job": {"job_options": {"job_name": "x"}, "application": {"executable": "a"},
                                  "target": {"job_scheduler_type": "slurmm"}}}))
    return str(path)


def test_validate_accepts_every_example():
    done = modak("validate", *EXAMPLES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["%s: valid" % path for path in EXAMPLES]


def test_validate_lists_problems_with_their_path_and_exits_1(bad):
    done = modak("validate", "--format", "json", bad, PYTORCH)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert [f["valid"] for f in report["files"]] == [False, True]
    assert [p["path"] for p in report["files"][0]["problems"]] == ["job.target.job_scheduler_type"]
    text = modak("validate", bad)
    assert text.returncode == 1
    assert "job.target.job_scheduler_type" in text.stdout


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["validate"], ["optimise", PYTORCH],
                                  ["validate", "--format", "xml", PYTORCH], ["validate", "/no/such/file.yaml"]])
def test_usage_errors_exit_2(args):
    done = modak(*args)
    assert done.returncode == 2, done
    assert done.stderr


def test_optimise_writes_the_scripts_the_core_writes(tmp_path):
    out = tmp_path / "jobs"
    done = modak("optimise", "--format", "json", "-o", str(out), *EXAMPLES)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    catalog = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
    for path, entry in zip(EXAMPLES, report["files"]):
        expected = pipeline.optimise(dsl.load_file(path), catalog)
        assert entry["file"] == path and entry["changed"] is True
        assert entry["job_script"] == str(out / expected.script.filename)
        assert (out / expected.script.filename).read_text() == expected.script.text
        assert entry["image"]["uri"] == expected.choice.uri


def test_optimise_is_deterministic_and_idempotent(tmp_path):
    first = modak("optimise", "-o", str(tmp_path), *EXAMPLES)
    again = modak("optimise", "-o", str(tmp_path), *EXAMPLES)
    json_one = modak("optimise", "--format", "json", "-o", str(tmp_path), *EXAMPLES)
    json_two = modak("optimise", "--format", "json", "-o", str(tmp_path), *EXAMPLES)
    assert first.returncode == again.returncode == 0
    assert " wrote " in first.stdout and " wrote " not in again.stdout
    assert first.stdout.replace(" wrote ", " unchanged ") == again.stdout
    assert json_one.stdout == json_two.stdout


def test_optimise_writes_nothing_when_one_dsl_is_invalid(tmp_path, bad):
    out = tmp_path / "jobs"
    done = modak("optimise", "-o", str(out), PYTORCH, bad)
    assert done.returncode == 1
    assert "nothing was written" in done.stdout
    assert not out.exists()


def test_optimise_refuses_two_dsls_with_one_job_name(tmp_path):
    copy = tmp_path / "copy.yaml"
    shutil.copy(PYTORCH, copy)
    done = modak("optimise", "-o", str(tmp_path / "jobs"), PYTORCH, str(copy))
    assert done.returncode == 1
    assert "mnist-train.sbatch" in done.stdout


def test_optimise_check_writes_nothing_and_exits_3_when_it_would_write(tmp_path):
    done = modak("optimise", "--check", "-o", str(tmp_path / "jobs"), PYTORCH)
    assert done.returncode == 3 and "would write" in done.stdout
    assert not (tmp_path / "jobs").exists()
    assert modak("optimise", "-o", str(tmp_path / "jobs"), PYTORCH).returncode == 0
    done = modak("optimise", "--check", "-o", str(tmp_path / "jobs"), PYTORCH)
    assert done.returncode == 0 and "unchanged" in done.stdout


def test_recipe_check_exits_3_when_it_would_write(tmp_path):
    assert modak("recipe", "--check", PYTORCH, "-o", str(tmp_path / "r")).returncode == 3
    assert modak("recipe", PYTORCH, "-o", str(tmp_path / "r")).returncode == 0
    assert modak("recipe", "--check", PYTORCH, "-o", str(tmp_path / "r")).returncode == 0


def test_version_is_the_collections(tmp_path):
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        wanted = yaml.safe_load(handle)["version"]
    done = modak("--version", cwd=str(tmp_path))
    assert done.returncode == 0 and done.stdout.strip() == "modak %s" % wanted


def test_recipe_writes_both_recipes(tmp_path):
    done = modak("recipe", "--format", "json", PYTORCH, "-o", str(tmp_path))
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["files"][0]
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in entry["recipes"].values())
    assert "FROM " in (tmp_path / "Dockerfile").read_text()


def test_a_symlink_on_the_path_is_the_documented_install(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(MODAK, bindir / "modak")
    done = modak("validate", PYTORCH, command=str(bindir / "modak"), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_pre_commit_hooks_run_as_pre_commit_runs_them(tmp_path, bad):
    """Each hook's entry + args + file names, from the hook repository, in the user's repository."""
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
        hooks = {hook["id"]: hook for hook in yaml.safe_load(handle)}
    assert set(hooks) == {"modak-validate", "modak-optimise"}
    shutil.copy(PYTORCH, tmp_path / "train.yaml")

    def run(hook, *names):
        argv = shlex.split(hook["entry"])
        assert hook["language"] == "python" and argv[0] == "modak"   # the package's entry point: bin/modak's main
        argv[0] = MODAK
        return subprocess.run(argv + hook.get("args", []) + list(names), cwd=str(tmp_path), env=_env(),
                              capture_output=True, text=True, check=False, timeout=120)

    git(tmp_path, "init", "-q")
    assert run(hooks["modak-validate"], "train.yaml").returncode == 0
    assert run(hooks["modak-validate"], "train.yaml", bad).returncode == 1
    done = run(hooks["modak-optimise"], "train.yaml")             # a new DSL: its new script must be added
    assert done.returncode == 3 and "git add jobs/mnist-train.sbatch" in done.stdout
    assert (tmp_path / "jobs" / "mnist-train.sbatch").is_file()
    done = run(hooks["modak-optimise"], "train.yaml")             # written but still not in git: fails again
    assert done.returncode == 3 and "git add jobs/mnist-train.sbatch" in done.stdout
    git(tmp_path, "add", "train.yaml", "jobs/mnist-train.sbatch", "jobs/modak-manifest.json")
    assert run(hooks["modak-optimise"], "train.yaml").returncode == 0
    text = (tmp_path / "train.yaml").read_text().replace("--epochs 5", "--epochs 6")
    (tmp_path / "train.yaml").write_text(text)                    # a changed DSL: its script changes
    done = run(hooks["modak-optimise"], "train.yaml")
    assert done.returncode == 3 and "git add jobs/mnist-train.sbatch" in done.stdout


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org"] + list(args), cwd=str(cwd),
                   check=True, capture_output=True, timeout=60)


def test_the_ci_check_fails_on_a_dsl_whose_script_is_not_committed(tmp_path):
    """docs/cli.md's CI steps in a fresh clone: a committed DSL without its script fails the check."""
    (tmp_path / "dsl").mkdir()
    shutil.copy(PYTORCH, tmp_path / "dsl" / "train.yaml")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "dsl")
    git(tmp_path, "commit", "-qm", "a DSL without its script")
    assert modak("validate", "dsl/train.yaml", cwd=str(tmp_path)).returncode == 0
    assert modak("optimise", "--check", "dsl/train.yaml", "-o", "jobs", cwd=str(tmp_path)).returncode == 3
    assert modak("optimise", "dsl/train.yaml", "-o", "jobs", cwd=str(tmp_path)).returncode == 0
    git(tmp_path, "add", "jobs")
    git(tmp_path, "commit", "-qm", "its script")
    assert modak("optimise", "--check", "dsl/train.yaml", "-o", "jobs", cwd=str(tmp_path)).returncode == 0


HOSTILE = "\x1b[2J\x9b31m\u202e\u2028\r\n"


def test_validate_escapes_what_reaches_the_terminal(tmp_path):
    """Keys and file names are shown with control characters, C1 controls, bidi overrides and line breaks escaped:
    no escape sequence reaches the terminal and no line can be forged (such as 'x.yaml: valid')."""
    from io import StringIO
    from ansible_collections.sodalite.modak.plugins.module_utils import cli
    name = tmp_path / ("evil%s\nforged.yaml: valid" % HOSTILE.replace("\n", ""))
    name.write_text(json.dumps({"job": {"application": {"executable": "./a", "env%s\nforged: valid" % HOSTILE: 1},
                                        "target": {"job_scheduler_type": "slurm"}}}))
    out = StringIO()
    status = cli.main(["validate", str(name)], stdout=out, stderr=StringIO())
    assert status == 1
    text = out.getvalue()
    assert not any(c in text for c in "\x1b\x9b\u202e\u2028\r"), repr(text)
    lines = text.splitlines()
    assert not any(line.startswith("forged") for line in lines), lines
    assert lines[0].endswith(": invalid, 1 problem(s)") and all(line.startswith("  ") for line in lines[1:]), lines


def test_a_fifo_is_refused_at_once(tmp_path):
    """A FIFO given as the DSL file would block reading forever: it is refused as not a regular file."""
    fifo = tmp_path / "dsl.yaml"
    os.mkfifo(str(fifo))
    for args in (["validate", str(fifo)], ["optimise", "-o", str(tmp_path / "out"), str(fifo)]):
        done = subprocess.run([MODAK] + args, capture_output=True, text=True, env=_env(), timeout=30, check=False)
        assert done.returncode in (1, 2) and "regular file" in done.stdout + done.stderr, done
