"""Container runtimes: the exact run lines, binds, environment and GPU flags of every engine."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers import ai_doc, with_
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names, oci, registry
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw
from ansible_collections.sodalite.modak.plugins.module_utils.shell import quote as shell_quote

IMAGE = Raw('"$IMAGE"')
ENV = (("OMP_NUM_THREADS", "4"), ("X", "a b"))
BINDS = ("/scratch/data:/data:ro", "/home")


def argv(engine, gpu="none", cmd=("python3", "train.py"), **kw):
    return registry.get(engine).exec_argv(IMAGE, list(cmd), gpu, BINDS, env=ENV, **kw)


def test_registry_knows_four_engines():
    assert sorted(registry.RUNTIMES) == ["apptainer", "charliecloud", "podman", "singularity"]
    with pytest.raises(KeyError, match="known: apptainer, charliecloud, podman, singularity"):
        registry.get("docker")


@pytest.mark.parametrize("gpu,flags", [("none", []), ("nvidia", ["--device", "nvidia.com/gpu=all"]),
                                       ("amd", ["--device", "/dev/kfd", "--device", "/dev/dri"])])
def test_podman_run_line(gpu, flags):
    assert argv("podman", gpu) == (
        ["podman", "run", "--rm", "--network=host", "--ipc=host", Raw('"$MODAK_PODMAN_USERNS"'),
         "--env", "OMP_NUM_THREADS", "--env", "X"] + flags
        + ["--volume", "/scratch/data:/data:ro", "--volume", "/home:/home", "--volume", Raw('"$PWD:$PWD"'),
           "--workdir", Raw('"$PWD"'), IMAGE, "python3", "train.py"])


def test_podman_known_working_directory_is_bound_once():
    words = registry.get("podman").exec_argv(IMAGE, ["x"], binds=("/scratch/run",), cwd="/scratch/run")
    assert words[-6:] == ["--volume", "/scratch/run:/scratch/run", "--workdir", "/scratch/run", IMAGE, "x"]
    assert Raw('"$PWD:$PWD"') not in words


def test_podman_without_command_runs_the_image_default():
    assert argv("podman", cmd=())[-1] == IMAGE


@pytest.mark.parametrize("gpu", ["none", "nvidia", "amd"])
def test_charliecloud_run_line(gpu):
    # no GPU flag: NVIDIA libraries are injected into the image once (ch-fromhost), /dev is the host's
    assert argv("charliecloud", gpu) == [
        "ch-run", "--set-env", "--set-env=OMP_NUM_THREADS=4", "--set-env=X=a b", "--private-tmp",
        "-b", "/scratch/data:/data", "-b", "/home", "-b", Raw('"$PWD"'), "-c", Raw('"$PWD"'), IMAGE, "--",
        "python3", "train.py"]


def test_charliecloud_needs_a_command():
    with pytest.raises(DslInvalid, match="job.application.executable: is required with charliecloud"):
        argv("charliecloud", cmd=())


def test_charliecloud_known_working_directory():
    words = registry.get("charliecloud").exec_argv(IMAGE, ["x"], binds=("/w",), cwd="/w")
    assert words[-7:] == ["-b", "/w", "-c", "/w", IMAGE, "--", "x"]


def test_apptainer_argv_unchanged_by_env_and_cwd():
    assert argv("apptainer", "nvidia", cwd="/w") == [
        "apptainer", "exec", "--nv", "--bind", "/scratch/data:/data:ro,/home", IMAGE, "python3", "train.py"]


def test_charliecloud_fetch_lines_pull_convert_and_inject_nvidia():
    uri = "docker://registry.example.org:5000/modak/pytorch:2.13"
    lines = registry.get("charliecloud").fetch_lines(uri, "/shared/ch", "nvidia")
    ref = "registry.example.org:5000/modak/pytorch:2.13"
    assert lines == [
        'export USER="${USER:-$(id -un)}"',
        "MODAK_IMAGE_DIR=/shared/ch",
        'mkdir -p "$MODAK_IMAGE_DIR"',
        'IMAGE="$MODAK_IMAGE_DIR/pytorch_2.13-%s"' % names.digest(uri),
        'if [ ! -d "$IMAGE" ]; then',
        '  ch-image pull %s && ch-convert -i ch-image -o dir %s "$IMAGE.part.$$" && '
        'ch-fromhost --nvidia "$IMAGE.part.$$" && mv -T "$IMAGE.part.$$" "$IMAGE"' % (ref, ref),
        "fi"]
    assert "ch-fromhost" not in "\n".join(registry.get("charliecloud").fetch_lines(uri, None, "none"))


def test_charliecloud_default_image_dir_and_local_images():
    ch = registry.get("charliecloud")
    assert ch.fetch_lines("docker://x/y:1")[1] == \
        'MODAK_IMAGE_DIR="${MODAK_IMAGE_DIR:-${CH_IMAGE_DIR:-$HOME/.modak/images}}"'
    assert ch.fetch_lines("/images/pytorch.sqfs") == ['export USER="${USER:-$(id -un)}"', "IMAGE=/images/pytorch.sqfs"]
    with pytest.raises(DslInvalid, match="charliecloud cannot run the SIF file"):
        ch.fetch_lines("/images/pytorch.sif")
    with pytest.raises(DslInvalid, match="charliecloud runs OCI images"):
        ch.fetch_lines("oras://reg/x.sif")


@pytest.mark.parametrize("uri,ref", [("docker://ethcscs/openmpi:3.1.3", "docker.io/ethcscs/openmpi:3.1.3"),
                                     ("docker://ubuntu:22.04", "docker.io/library/ubuntu:22.04"),
                                     ("docker://localhost/modak/x:1", "localhost/modak/x:1"),
                                     ("docker://127.0.0.1:5000/m/x:1", "127.0.0.1:5000/m/x:1"),
                                     ("ghcr.io/a/b@sha256:00", "ghcr.io/a/b@sha256:00")])
def test_oci_references_are_fully_qualified(uri, ref):
    assert oci.reference(uri, "podman") == ref
    assert registry.get("podman").fetch_lines(uri)[-1] == "IMAGE=%s" % ref


def test_podman_refuses_sif_images():
    with pytest.raises(DslInvalid, match="podman runs OCI images"):
        registry.get("podman").fetch_lines("oras://ghcr.io/x/y.sif")
    with pytest.raises(DslInvalid, match="podman cannot run the SIF file"):
        registry.get("podman").fetch_lines("image.sif")


def test_cache_names_keep_a_readable_tail_and_the_whole_reference():
    a, b = "docker://a.example/x/pytorch:2.5", "docker://pytorch/pytorch:2.5"
    assert names.cache_name(a) != names.cache_name(b)
    assert names.cache_name(a).startswith("pytorch_2.5-") and len(names.digest(a)) == 16
    assert names.cache_name("oras://r/ns/img.sif", ".sif") == "img-%s.sif" % names.digest("oras://r/ns/img.sif")


@pytest.mark.parametrize("engine", ["charliecloud", "podman"])
@pytest.mark.parametrize("scheduler", ["slurm", "pbspro", "local"])
def test_scripts_of_every_engine_lint(engine, scheduler, catalog, tmp_path):
    doc = with_(ai_doc("tensorflow", "2.1", acc="nvidia", scheduler=scheduler), "job.target.container_engine", engine)
    doc = with_(doc, "job.application.bind_paths", list(BINDS))
    doc = with_(doc, "job.application.environment", {"X": "a b", "Y": "$(touch pwned)"})
    text = pipeline.optimise(doc, catalog).script.text
    lint(text, tmp_path)
    run = text.rstrip().splitlines()[-1]
    assert run.startswith({"charliecloud": "ch-run --set-env", "podman": "podman run --rm"}[engine]), run


def test_podman_script_with_working_directory(catalog):
    doc = with_(ai_doc("pytorch", "2.5"), "job.target.container_engine", "podman")
    doc = with_(doc, "job.application.working_directory", "/scratch/run")
    text = pipeline.optimise(doc, catalog).script.text
    assert "cd /scratch/run" in text
    assert text.rstrip().endswith('--volume /scratch/run:/scratch/run --workdir /scratch/run "$IMAGE" python3 train.py')


STAGE_URI = "docker://registry.example/modak/pytorch:2.5"


@pytest.mark.parametrize("engine", ["apptainer", "singularity", "charliecloud", "podman"])
def test_check_lines_stop_a_job_whose_image_is_not_staged_and_never_fetch(engine, tmp_path):
    """The job's lines of a staged image: in an empty image directory they stop the job and say what to do."""
    lines = registry.get(engine).check_lines(STAGE_URI, shell_quote(str(tmp_path)))
    assert not [line for line in lines if not line.strip().startswith("echo")
                and ("pull" in line.split("#")[0] or "mkdir" in line or "ch-convert" in line)]
    if engine == "podman":
        return                       # `podman image exists` needs podman: its words are checked above
    done = subprocess.run(["bash", "-c", "\n".join(lines + ["echo reached"])], capture_output=True, text=True,
                          check=False, timeout=30, env=dict(os.environ, USER="u"))
    assert done.returncode == 1 and "reached" not in done.stdout
    assert "modak: no image at %s/" % tmp_path in done.stderr and "target.image_fetch: job" in done.stderr


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud"])
def test_check_lines_pass_once_the_image_is_staged_where_stage_lines_put_it(engine, tmp_path):
    runtime = registry.get(engine)
    name = names.cache_name(STAGE_URI, ".sif" if engine == "apptainer" else "")
    (tmp_path / name).mkdir() if engine == "charliecloud" else (tmp_path / name).write_text("sif")
    lines = runtime.check_lines(STAGE_URI, shell_quote(str(tmp_path)))
    done = subprocess.run(["bash", "-c", "\n".join(lines + ['echo "reached $IMAGE"'])], capture_output=True,
                          text=True, check=False, timeout=30, env=dict(os.environ, USER="u"))
    assert done.returncode == 0 and done.stdout.strip() == "reached %s/%s" % (tmp_path, name)
    assert 'IMAGE="$MODAK_IMAGE_DIR/%s"' % name in runtime.stage_lines(STAGE_URI, shell_quote(str(tmp_path)))


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud", "podman"])
def test_every_stage_script_passes_bash_n_and_shellcheck(engine, catalog, tmp_path):
    doc = with_(with_(ai_doc("pytorch", "2.5"), "job.target.container_engine", engine), "job.target.setup",
                ["export HTTPS_PROXY=http://proxy:3128"])
    result = pipeline.optimise(doc, catalog)
    assert result.extra["stage"].startswith("#!/bin/bash\n")
    lint(result.extra["stage"], tmp_path, "stage.sh")
    lint(result.script.text, tmp_path, "job.sh")


def test_a_stage_script_whose_fetch_fails_fails(catalog, tmp_path):
    """`apptainer pull ... && mv ...` failing (here: no apptainer on this machine) does not stop a set -e script:
    the stage script checks again and fails."""
    doc = with_(ai_doc("pytorch", "2.5"), "job.target.image_dir", str(tmp_path / "images"))
    stage = pipeline.optimise(doc, catalog).extra["stage"]
    (tmp_path / "stage.sh").write_text(stage)
    done = subprocess.run(["bash", str(tmp_path / "stage.sh")], capture_output=True, text=True, check=False,
                          timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert "apptainer: command not found" in done.stderr
    assert done.returncode == 1 and "modak: no image at" in done.stderr and "staged" not in done.stdout
