"""Container runtimes: the exact run lines, binds, environment and GPU flags of every engine."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers import ai_doc, directory_with, with_
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names, oci, registry, trust
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw
from ansible_collections.sodalite.modak.plugins.module_utils.shell import quote as shell_quote

IMAGE = Raw('"$IMAGE"')
ENV = (("OMP_NUM_THREADS", "4"), ("X", "a b"))
BINDS = ("/scratch/data:/data:ro", "/home")


def argv(engine, gpu="none", cmd=("python3", "train.py"), **kw):
    return registry.get(engine).exec_argv(IMAGE, list(cmd), gpu, BINDS, env=ENV, **kw)


def test_registry_knows_five_engines():
    assert sorted(registry.RUNTIMES) == ["apptainer", "charliecloud", "podman", "pyxis", "singularity"]
    with pytest.raises(KeyError, match="known: apptainer, charliecloud, podman, pyxis, singularity"):
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
        "ch-run", "--env-no-expand", "--set-env", Raw('--set-env="$MODAK_ENV_FILE"'), "--private-tmp",
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
    ] + trust.resolve_lines() + trust.before_fetch_lines() + [
        'if [ ! -d "$IMAGE" ]; then',
        '  ch-image pull %s && ch-convert -i ch-image -o dir %s "$IMAGE.part.$$" && '
        'ch-fromhost --nvidia "$IMAGE.part.$$" && mv -T "$IMAGE.part.$$" "$IMAGE"' % (ref, ref),
        "fi"] + trust.before_launch_lines()
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
    assert run.startswith({"charliecloud": "ch-run --env-no-expand --set-env", "podman": "podman run --rm"}[engine]), run
    assert "pwned" not in run, run                      # values never reach argv


def test_podman_script_with_working_directory(catalog):
    doc = with_(ai_doc("pytorch", "2.5"), "job.target.container_engine", "podman")
    doc = with_(doc, "job.application.working_directory", "/scratch/run")
    text = pipeline.optimise(doc, catalog).script.text
    assert "cd /scratch/run" in text
    assert text.rstrip().endswith('--volume /scratch/run:/scratch/run --workdir /scratch/run "$IMAGE" python3 train.py')


def test_charliecloud_values_stay_out_of_argv_and_literal():
    """ch-run expands $NAME and strips single quotes in --set-env=NAME=VALUE words, and argv is public (ps): the
    values go through a 0600 file written by bash builtins and read with --env-no-expand."""
    runtime = registry.get("charliecloud")
    env = (("A", "x $HOME y"), ("B", "it's"), ("C", "'q'"))
    words = runtime.exec_argv(IMAGE, ["x"], env=env)
    assert not any(value in str(word) for word in words for _name, value in env), words
    assert words[:4] == ["ch-run", "--env-no-expand", "--set-env", Raw('--set-env="$MODAK_ENV_FILE"')]
    assert runtime.env_lines(env) == trust.workdir_lines("the container's variables") + [
        'MODAK_ENV_FILE="$(mktemp "$MODAK_WORKDIR/.modak-env.XXXXXX")"', 'MODAK_EXIT_TRAP="$(trap -p EXIT)"',
        'MODAK_EXIT_TRAP="$(eval "set -- $MODAK_EXIT_TRAP"; printf %s "${3:-}")"',
        "trap 'MODAK_STATUS=$?; rm -f \"$MODAK_ENV_FILE\"; (exit \"$MODAK_STATUS\"); eval \"$MODAK_EXIT_TRAP\"' EXIT",
        'printf "%s=\'%s\'\\n" A "$A" B "$B" C "$C" >"$MODAK_ENV_FILE"']


def test_charliecloud_env_file_holds_the_values_literally(tmp_path):
    """The lines run by bash write NAME='value' lines that ch-run's file syntax reads back literally."""
    import subprocess
    env = (("A", "x $HOME y"), ("B", "it's"), ("C", "'q'"), ("D", "100%s \\n"))
    script = "\n".join(["set -eo pipefail"] + ["export %s=%s" % (n, shell_quote(v)) for n, v in env]
                       + registry.get("charliecloud").env_lines(env)
                       + ['stat -c %a "$MODAK_ENV_FILE"', 'cat "$MODAK_ENV_FILE"', "trap - EXIT"])
    done = subprocess.run(["bash", "-c", script], cwd=str(tmp_path), capture_output=True, text=True, check=True)
    mode, *lines = done.stdout.splitlines()
    assert mode == "600"
    # ch-run strips one pair of outer single quotes and, with --env-no-expand, nothing else
    assert [(line.split("=", 1)[0], line.split("=", 1)[1][1:-1]) for line in lines] == list(env)


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud"])
@pytest.mark.parametrize("planted,refused", [
    (None, False), ("own", False), ("other-user", True), ("writable", True), ("link", True)],
    ids=["missing", "own", "other-user", "writable", "link"])
def test_a_cached_image_is_run_only_when_it_is_the_users_own(tmp_path, engine, planted, refused):
    """In a shared image directory anybody can put a file under the predictable cache name: the job stops before
    running an image that is a link, another user's, or that others may change (run by bash, stub runtimes)."""
    import subprocess
    uri = "docker://example.org/x/app:1"
    images = tmp_path / "images"
    images.mkdir()
    name = names.cache_name(uri, ".sif" if engine == "apptainer" else "")
    target = images / name
    if planted == "link":
        (tmp_path / "elsewhere").write_text("x")
        target.symlink_to(tmp_path / "elsewhere")
    elif planted:
        if engine == "apptainer":
            target.write_text("planted")
        else:
            (target / "bin").mkdir(parents=True)
            (target / "bin" / "sh").write_text("planted")
        os.chmod(str(target), 0o777 if planted == "writable" and engine == "apptainer" else 0o755)
        if planted == "writable" and engine == "charliecloud":
            os.chmod(str(target / "bin" / "sh"), 0o666)
        if planted == "other-user":
            for root, dirs, files in os.walk(str(target)):
                for entry in [root] + [os.path.join(root, f) for f in files + dirs]:
                    os.chown(entry, 65534, 65534)
            os.chown(str(target), 65534, 65534)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for tool in ("apptainer", "ch-image", "ch-convert", "ch-fromhost"):
        (stubs / tool).write_text('#!/bin/sh\necho "%s $*" >> %s\n[ "$1" = pull ] && [ "$2" = --force ] && echo sif > "$3"\n'
                                  '[ "$1" = -i ] && mkdir -p "$6"\nexit 0\n' % (tool, tmp_path / "calls"))
        (stubs / tool).chmod(0o755)
    lines = registry.get(engine).fetch_lines(uri, shell_quote(str(images)))
    done = subprocess.run(["bash", "-c", "set -eo pipefail\n" + "\n".join(lines) + "\necho USING $IMAGE"],
                          env=dict(os.environ, PATH="%s:%s" % (stubs, os.environ["PATH"]), USER="u"),
                          capture_output=True, text=True, check=False)
    if refused:
        assert done.returncode == 1 and "not this user's own image" in done.stderr, done
        assert not (tmp_path / "calls").exists()
    else:
        assert done.returncode == 0 and "USING" in done.stdout, done


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


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud"])
def test_a_staged_image_of_another_user_is_not_run(engine, tmp_path):
    """The job's check of a staged image refuses what another user planted under the cache name, as fetching does."""
    name = names.cache_name(STAGE_URI, ".sif" if engine == "apptainer" else "")
    target = tmp_path / name
    target.mkdir() if engine == "charliecloud" else target.write_text("sif")
    os.chown(str(target), 65534, 65534)
    lines = registry.get(engine).check_lines(STAGE_URI, shell_quote(str(tmp_path)))
    done = subprocess.run(["bash", "-c", "\n".join(lines + ["echo reached"])], capture_output=True, text=True,
                          check=False, timeout=30, env=dict(os.environ, USER="u"))
    assert done.returncode == 1 and "reached" not in done.stdout and "not this user's own image" in done.stderr


def test_a_stage_script_whose_fetch_fails_fails(catalog, tmp_path):
    """`apptainer pull ... && mv ...` failing (here: no apptainer on this machine) would not stop a set -e script
    by itself: the stage script ends there with the pull's status."""
    doc = with_(ai_doc("pytorch", "2.5"), "job.target.image_dir", str(tmp_path / "images"))
    stage = pipeline.optimise(doc, catalog).extra["stage"]
    (tmp_path / "stage.sh").write_text(stage)
    done = subprocess.run(["bash", str(tmp_path / "stage.sh")], capture_output=True, text=True, check=False,
                          timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert "apptainer: command not found" in done.stderr
    assert done.returncode == 127 and "modak: no image at" not in done.stderr and "staged" not in done.stdout


def test_an_image_directory_with_its_own_sticky_tmp_is_run(tmp_path):
    """Every image directory has a world-writable sticky /tmp (and /var/tmp): that is not 'others may change it'.
    A world-writable file is (the demo's converted PyTorch image was refused before)."""
    image = tmp_path / "img"
    (image / "tmp").mkdir(parents=True)
    (image / "tmp").chmod(0o1777)
    (image / "bin").mkdir()
    (image / "bin" / "sh").write_text("x")
    script = "\n".join(trust.trust_lines() + ["echo RUN"])
    done = subprocess.run(["bash", "-c", script], env=dict(os.environ, IMAGE=str(image)), capture_output=True,
                          text=True, check=False, timeout=30)
    assert done.returncode == 0 and "RUN" in done.stdout, done
    (image / "bin" / "sh").chmod(0o666)
    done = subprocess.run(["bash", "-c", script], env=dict(os.environ, IMAGE=str(image)), capture_output=True,
                          text=True, check=False, timeout=30)
    assert done.returncode == 1 and "RUN" not in done.stdout


def test_the_image_check_refuses_a_missing_image(tmp_path):
    """The check is the last test before the launch: no image at the path checked stops the job (before, a missing
    image passed, and an image another user created after the check was launched)."""
    script = "\n".join(trust.trust_lines() + ["echo RUN"])
    for image in (tmp_path / "x.sif", tmp_path / "no-directory" / "x.sif"):
        done = subprocess.run(["bash", "-c", script], env=dict(os.environ, IMAGE=str(image)), capture_output=True,
                              text=True, check=False, timeout=30)
        assert done.returncode == 1 and "RUN" not in done.stdout and "no image at %s" % image in done.stderr, done
    script = "\n".join(trust.resolve_lines() + ['modak_untrusted "$IMAGE"; modak_untrusted "$IMAGE" before-fetch'])
    done = subprocess.run(["bash", "-c", script], env=dict(os.environ, IMAGE=str(tmp_path / "x.sif")),
                          capture_output=True, text=True, check=False, timeout=30)
    assert done.stdout == "%s (missing)\n" % (tmp_path / "x.sif"), done


@pytest.mark.parametrize("mode, group, refused", [(0o2770, 4242, True), (0o777, None, True), (0o1777, None, False),
                                                  (0o755, None, False), (0o3770, 4242, False)])
def test_the_env_file_is_made_only_where_nobody_else_may_rename_it(mode, group, refused, tmp_path):
    """Hardening, round five, item 3: in a 2770 working directory of a group the site does not trust, a member renamed
    the new .modak-env file away and put her own at its name: she read HF_TOKEN and added LD_PRELOAD, which ch-run
    read. The job now stops before making the file when others may rename entries in its working directory."""
    import subprocess
    work = directory_with(tmp_path / "work", mode, group)
    script = "\n".join(["set -eo pipefail", "export A=secret"] + registry.get("charliecloud").env_lines([("A", "x")])
                       + ['cat "$MODAK_ENV_FILE"'])
    done = subprocess.run(["bash", "-c", script], cwd=str(work), capture_output=True, text=True, check=False)
    if refused:
        assert done.returncode == 1 and "others may rename files" in done.stderr, done.stderr
        assert not [name for name in os.listdir(str(work)) if name.startswith(".modak-env")]
    else:
        assert done.returncode == 0 and done.stdout == "A='secret'\n", done.stderr
