"""The optimise module through real ansible-playbook runs: result, check mode, diff, idempotence, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import EXAMPLES, ROOT

PLAYBOOK = os.path.join(ROOT, "tests", "integration", "playbooks", "optimise_task.yml")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
EXAMPLE = os.path.join(ROOT, "examples", "tensorflow-xla-gpu-torque.json")


def play(tmp_path, *extra, playbook=PLAYBOOK, expect_rc=0):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_STDOUT_CALLBACK="default")
    result = subprocess.run([ANSIBLE_PLAYBOOK, playbook] + list(extra), cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == expect_rc, result.stdout + result.stderr
    return result


def run_module(tmp_path, *extra, expect_rc=0):
    out = tmp_path / "out"
    result_file = tmp_path / "result.json"
    proc = play(tmp_path, "-e", "output_dir=%s" % out, "-e", "result_file=%s" % result_file, *extra,
                expect_rc=expect_rc)
    data = json.loads(result_file.read_text()) if expect_rc == 0 else None
    return proc, data, out


def test_optimise_writes_the_script_and_returns_the_contract(tmp_path):
    _proc, data, out = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE)
    assert data["changed"] is True
    image = data["image"]
    assert image["uri"] == "docker://modakopt/modak:tensorflow-2.1-gpu-src"
    assert image["framework"] == "tensorflow" and image["version"] == "2.1.0" and image["accelerator"] == "nvidia"
    assert "xla" in image["features"]
    assert data["availability"] == image["availability"] == "published" and data["build"] == {}
    assert data["scheduler"] == "torque"
    assert data["target"]["job_scheduler_type"] == "torque" and "login_host" in data["target"]
    assert data["job_script"] == str(out / "resnet.pbs")
    assert (out / "resnet.pbs").read_text() == data["job_script_content"]
    assert os.access(str(out / "resnet.pbs"), os.X_OK)
    assert data["settings"]["env"]["TF_XLA_FLAGS"].startswith("--tf_xla_auto_jit=2")
    assert any(line.startswith("chosen modak-tensorflow-2.1-gpu-src") for line in data["explanation"])
    # Ansible reserves the key 'warnings' (it shows them); the list is also returned as modak_warnings
    assert any("request_gpus" not in w for w in data["modak_warnings"]) or data["modak_warnings"] == []
    assert isinstance(data["modak_warnings"], list)


def test_second_run_is_unchanged_and_diff_shows_changes(tmp_path):
    _p, first, out = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE)
    mtime = os.stat(first["job_script"]).st_mtime_ns
    _p, second, _out = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE)
    assert second["changed"] is False
    assert os.stat(first["job_script"]).st_mtime_ns == mtime
    # a different walltime changes the script; --diff shows the line
    with open(EXAMPLE) as handle:
        doc = json.load(handle)
    doc["job"]["job_options"]["wall_time_limit"] = "30:00:00"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    proc, third, _out = run_module(tmp_path, "-e", "dsl_file=%s" % changed, "--diff")
    assert third["changed"] is True
    assert "-#PBS -l walltime=12:00:00" in proc.stdout and "+#PBS -l walltime=30:00:00" in proc.stdout
    assert "#PBS -l walltime=30:00:00" in (out / "resnet.pbs").read_text()


def test_check_mode_writes_nothing_but_returns_the_content(tmp_path):
    _p, data, out = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE, "--check")
    assert data["changed"] is True
    assert "#PBS -N resnet" in data["job_script_content"]
    assert not out.exists()


def test_inline_dsl_and_own_catalog(tmp_path):
    catalog = tmp_path / "site.yaml"
    catalog.write_text("images:\n  - {name: site-tf, uri: 'docker://site/tf:2.1', framework: tensorflow, "
                       "version: '2.1.0', accelerator: nvidia, isa: x86-64}\n")
    dsl = {"job": {"application": {"executable": "./t"}, "target": {"job_scheduler_type": "slurm"},
                   "optimisation": {"app_type": "ai_training", "opt_build": {"cpu_type": "x86", "acc_type": "nvidia"},
                                    "app_type-ai_training": {"config": {"ai_framework": "tensorflow"}}}}}
    _p, data, _out = run_module(tmp_path, "-e", json.dumps({"dsl": dsl}), "-e", "catalog=%s" % catalog)
    assert data["image"]["uri"] == "docker://site/tf:2.1"
    assert data["scheduler"] == "slurm"


def test_invalid_dsl_fails_with_every_problem_listed(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("job:\n  job_options: {job_name: 'x y', queu: a}\n  application: {mpi_ranks: 0}\n")
    proc, _data, out = run_module(tmp_path, "-e", "dsl_file=%s" % bad, expect_rc=2)
    text = proc.stdout
    assert "job.job_options.job_name" in text and "job.job_options.queu" in text
    assert "did you mean 'queue'?" in text and "job.application.mpi_ranks" in text
    assert not out.exists()


def test_failed_run_keeps_the_previous_script(tmp_path):
    _p, first, out = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE)
    before = (out / "resnet.pbs").read_text()
    with open(EXAMPLE) as handle:
        doc = json.load(handle)
    doc["job"]["application"]["mpi_ranks"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    run_module(tmp_path, "-e", "dsl_file=%s" % bad, expect_rc=2)
    assert (out / "resnet.pbs").read_text() == before
    assert sorted(os.listdir(str(out))) == ["resnet.pbs"]


def test_symlink_planted_in_output_dir_is_replaced_never_followed(tmp_path):
    """The script is renamed over a link at its path (as ansible.builtin.copy and template do): the file the link
    named keeps its content."""
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    os.symlink(str(outside), str(out / "resnet.pbs"))
    _proc, data, _o = run_module(tmp_path, "-e", "dsl_file=%s" % EXAMPLE)
    assert data["changed"] is True
    assert outside.read_text() == "keep"
    assert not os.path.islink(str(out / "resnet.pbs"))
    assert (out / "resnet.pbs").read_text() == data["job_script_content"]


@pytest.mark.parametrize("example", [os.path.basename(path) for path in EXAMPLES])
def test_main_playbook_on_every_example(tmp_path, example):
    proc = play(tmp_path, playbook=os.path.join(ROOT, "playbooks", "optimise.yml"),
                *["-e", "dsl_file=%s" % os.path.join(ROOT, "examples", example), "-e", "output_dir=%s" % tmp_path])
    assert "job_script" in proc.stdout and "explanation" in proc.stdout
    assert len(os.listdir(str(tmp_path))) == 1


def test_a_recipe_backed_image_reports_to_build_then_built(tmp_path):
    """availability of a recipe-backed image follows its SIF in the image directory named by build_prefix."""
    images = tmp_path / "images"
    images.mkdir()
    dsl = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")
    _proc, data, _out = run_module(tmp_path, "-e", "dsl_file=%s" % dsl, "-e", "build_prefix=%s" % images)
    assert data["availability"] == data["image"]["availability"] == "to-build"
    uri = data["image"]["uri"]
    assert uri.startswith(str(images) + "/") and uri.endswith(".sif")
    assert data["image"]["recipe"]["framework"] == "pytorch"       # the catalog's recipe specification
    assert data["build"]["image"] == uri and data["build"]["push_to"] == ""
    assert data["build"]["recipe"] == data["image"]["recipe"] and "dsl" not in data["build"]   # built as it is
    with open(uri, "w") as handle:
        handle.write("a built image")
    _proc, again, _out = run_module(tmp_path, "-e", "dsl_file=%s" % dsl, "-e", "build_prefix=%s" % images)
    assert again["availability"] == "built"


def test_an_optimised_build_asked_for_is_the_recipe_to_build_never_a_cuda_image(tmp_path):
    """Issue 22, found 3: a CPU PyTorch 2.1 job with enable_opt_build got pytorch/pytorch:2.1.2-cuda12.1."""
    dsl = {"job": {"application": {"executable": "python3 train.py"}, "target": {"job_scheduler_type": "slurm"},
                   "optimisation": {"app_type": "ai_training", "enable_opt_build": True,
                                    "opt_build": {"cpu_type": "x86"},
                                    "app_type-ai_training": {"config": {"ai_framework": "pytorch"},
                                                             "ai_framework-pytorch": {"version": "2.1"}}}}}
    images = tmp_path / "images"
    images.mkdir()
    _p, data, _out = run_module(tmp_path, "-e", json.dumps({"dsl": dsl}), "-e", "build_prefix=%s" % images)
    assert data["image"]["source"] == "recipe" and data["availability"] == "to-build"
    assert data["image"]["version"] == "2.1" and data["image"]["accelerator"] == "none"
    assert "cuda" not in data["image"]["uri"] and data["image"]["uri"].startswith(str(images) + "/")
    assert data["build"]["image"] == data["image"]["uri"]
    assert data["build"]["recipe"]["framework"] == "pytorch" and data["build"]["recipe"]["version"] == "2.1"
