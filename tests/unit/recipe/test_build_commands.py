"""Exact argv of the build runner (Apptainer/Singularity cannot be installed here: their argv is the test)."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import build_commands as bc

SHA = "a" * 64


def test_apptainer_fakeroot_builds_to_a_partial_file_then_moves_it():
    plan = bc.plan("apptainer", "/r/Singularity.def", "/img/x.sif", context="/r", fakeroot=True,
                   push_to="oras://reg.example.org/modak/x:1")
    assert plan["build_argv"] == ["apptainer", "build", "--fakeroot", "--force", "/img/x.sif.partial",
                                  "/r/Singularity.def"]
    assert plan["finalise_argv"] == ["mv", "-f", "/img/x.sif.partial", "/img/x.sif"]
    assert plan["inspect_argv"] == ["apptainer", "inspect", "--labels", "/img/x.sif"]
    assert plan["push_argv"] == ["apptainer", "push", "/img/x.sif", "oras://reg.example.org/modak/x:1"]


def test_singularity_without_fakeroot():
    assert bc.build_argv("singularity", "S.def", "x.sif") == ["singularity", "build", "--force", "x.sif.partial",
                                                              "S.def"]
    assert bc.push_argv("singularity", "x.sif", "oras://r/x:1") == ["singularity", "push", "x.sif", "oras://r/x:1"]


def test_podman_buildah_charliecloud():
    assert bc.build_argv("podman", "Dockerfile", "localhost/m/x:1", "/ctx", recipe_sha256=SHA) == [
        "podman", "build", "--pull=never", "-f", "Dockerfile", "-t", "localhost/m/x:1",
        "--label", "modak.recipe.sha256=" + SHA, "/ctx"]
    assert bc.build_argv("buildah", "Dockerfile", "m/x:1", "/ctx")[:3] == ["buildah", "bud", "--pull=never"]
    assert bc.build_argv("charliecloud", "Dockerfile", "x", "/ctx") == [
        "ch-image", "build", "--force", "-f", "Dockerfile", "-t", "x", "/ctx"]
    assert bc.inspect_argv("podman", "m/x:1") == [
        "podman", "image", "inspect", "--format", '{{ index .Config.Labels "modak.recipe.sha256" }}', "m/x:1"]
    assert bc.push_argv("podman", "m/x:1", "docker://127.0.0.1:5000/m/x:1", tls_verify=False) == [
        "podman", "push", "--tls-verify=false", "m/x:1", "docker://127.0.0.1:5000/m/x:1"]
    assert bc.finalise_argv("podman", "m/x:1") is None
    assert bc.remote_inspect_argv("docker://r:5000/m/x:1", tls_verify=False) == [
        "skopeo", "inspect", "--tls-verify=false", "--format", '{{ index .Labels "modak.recipe.sha256" }}',
        "docker://r:5000/m/x:1"]
    assert bc.remote_inspect_argv("oras://r/x:1") is None


@pytest.mark.parametrize("call", [
    lambda: bc.build_argv("apptainer", "S.def", "x.img"),                 # not a .sif
    lambda: bc.build_argv("podman", "D", "x; rm -rf /"),                  # hostile image name
    lambda: bc.build_argv("docker", "D", "x"),                            # unknown engine
    lambda: bc.push_argv("apptainer", "x.sif", "docker://r/x:1"),         # SIF goes to oras://
    lambda: bc.push_argv("podman", "x", "oras://r/x:1"),
    lambda: bc.push_argv("podman", "x", "docker://r/x:1 --creds=a:b"),
    lambda: bc.build_argv("podman", "D", "x", recipe_sha256="not-a-hash"),
    lambda: bc.job_script("bad name", [["true"]]),
])
def test_refused(call):
    with pytest.raises(bc.BuildError):
        call()


def test_job_script_passes_bash_n_and_shellcheck(tmp_path, root):
    plan = bc.plan("apptainer", "/r dir/Singularity.def", "/img/x.sif", context="/r dir", fakeroot=True,
                   push_to="oras://reg/x:1", cpus=4, walltime="02:00:00")
    text = plan["job_script"]
    assert text.splitlines()[:7] == ["#!/bin/bash", "#SBATCH --job-name=modak-build", "#SBATCH --nodes=1",
                                     "#SBATCH --ntasks=1", "#SBATCH --cpus-per-task=4", "#SBATCH --time=02:00:00",
                                     "#SBATCH --output=modak-build-%j.out"]
    assert "cd '/r dir'" in text
    assert "apptainer build --fakeroot --force /img/x.sif.partial '/r dir/Singularity.def'" in text
    script = tmp_path / "build.sbatch"
    script.write_text(text)
    subprocess.run(["bash", "-n", str(script)], check=True)
    shellcheck = os.path.join(root, ".venv", "bin", "shellcheck")
    if os.path.exists(shellcheck):
        subprocess.run([shellcheck, str(script)], check=True)


def test_charliecloud_push_honours_tls_verify():
    """Before: tls_verify was ignored for ch-image, so a registry with a private CA could not be used."""
    assert bc.push_argv("charliecloud", "x", "docker://127.0.0.1:5000/m/x:1") == [
        "ch-image", "push", "x", "127.0.0.1:5000/m/x:1"]
    assert bc.push_argv("charliecloud", "x", "docker://127.0.0.1:5000/m/x:1", tls_verify=False) == [
        "ch-image", "--tls-no-verify", "push", "x", "127.0.0.1:5000/m/x:1"]
