"""MPI ranks in containers: one container per rank started by srun; exact argv per runtime, and the scripts lint."""

from __future__ import annotations

import pytest
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import charliecloud, registry
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

IMAGE = Raw('"$IMAGE"')
PWD = Raw('"$PWD"')


def test_podman_pmix_rank():
    assert registry.get("podman").exec_argv(IMAGE, ["./prog"], mpi="pmix") == [
        "podman", "run", "--rm", "--network=host", "--ipc=host", Raw('"$MODAK_PODMAN_USERNS"'), "--pid=host",
        "--env", "PMIX_*", "--env", "PMI_*", "--env", "OMPI_*", "--env", "SLURM*", "--env", "PMIX_MCA_gds=hash",
        "--volume", Raw('"$PWD:$PWD"'), "--workdir", PWD, IMAGE, "./prog"]


def test_podman_pmi2_rank_hands_pmi_fd_into_the_container():
    words = registry.get("podman").exec_argv(IMAGE, ["./prog"], env=(("A", "1"),), mpi="pmi2")
    assert words[:4] == ["bash", "-c", 'exec 3>&"$PMI_FD" && PMI_FD=3 exec "$@"', "bash"]
    assert words[4:12] == ["podman", "run", "--rm", "--network=host", "--ipc=host", Raw('"$MODAK_PODMAN_USERNS"'),
                           "--pid=host", "--preserve-fds=1"]
    assert words[12:] == [
        "--env", "PMIX_*", "--env", "PMI_*", "--env", "OMPI_*", "--env", "SLURM*", "--env", "PMIX_MCA_gds=hash",
        "--env", "A", "--volume", Raw('"$PWD:$PWD"'), "--workdir", PWD, IMAGE, "./prog"]


def test_podman_rank_without_a_named_pmi_gets_the_variables_but_no_descriptor():
    words = registry.get("podman").exec_argv(IMAGE, ["./prog"], mpi="")
    assert words[0] == "podman" and "--pid=host" in words and "--preserve-fds=1" not in words


def test_podman_without_mpi_is_unchanged():
    words = registry.get("podman").exec_argv(IMAGE, ["./prog"])
    assert "--pid=host" not in words and "PMIX_*" not in words


def test_charliecloud_rank_switches_off_what_crosses_user_namespaces():
    assert registry.get("charliecloud").exec_argv(IMAGE, ["./prog"], env=(("OMP_NUM_THREADS", "1"),),
                                                  mpi="pmi2") == [
        "ch-run", "--env-no-expand", "--set-env", "--set-env=PMIX_MCA_gds=hash",
        "--set-env=OMPI_MCA_btl_vader_single_copy_mechanism=none", "--set-env=UCX_POSIX_USE_PROC_LINK=n",
        '--set-env="$MODAK_ENV_FILE"', "--private-tmp", "-b", PWD, "-c", PWD, IMAGE, "--", "./prog"]


def test_charliecloud_without_mpi_is_unchanged():
    words = registry.get("charliecloud").exec_argv(IMAGE, ["./prog"])
    assert not any("PMIX" in w for w in words)


def test_charliecloud_creates_mount_points_in_a_writable_image_directory():
    lines = registry.get("charliecloud").bind_lines(("/data:/in:ro", "/scratch"), None)
    assert lines == charliecloud.MOUNT_POINT_FUNCTION + [
        'if [ -d "$IMAGE" ] && [ -w "$IMAGE" ]; then  # ch-run cannot create mount points in a read-only image',
        "  modak_mount_point /in", "  modak_mount_point /scratch", '  modak_mount_point "$PWD"', "fi"]
    assert registry.get("charliecloud").bind_lines((), "/w") == []


def test_apptainer_rank_needs_nothing():
    runtime = registry.get("apptainer")
    assert runtime.exec_argv(IMAGE, ["./prog"], mpi="pmix") == runtime.exec_argv(IMAGE, ["./prog"])


MPICH = ImageCatalog.from_data({"images": [
    {"name": "mpich-img", "uri": "docker://reg.example/mpich:4", "framework": "mpich", "version": "4.0",
     "kind": "mpi", "mpi": {"library": "mpich", "version": "4.0.2", "pmi": "pmi2"}}]}, "test")


def mpich_doc(engine, ranks=4):
    return {"job": {
        "job_options": {"node_count": 2, "process_count_per_node": 2},
        "application": {"app_type": "mpi", "executable": "./prog", "mpi_ranks": ranks},
        "target": {"job_scheduler_type": "slurm", "container_engine": engine},
        "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                         "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                          "parallelisation-mpi": {"library": "mpich"}}}}}


@pytest.mark.parametrize("engine,start", [
    ("podman", "srun --mpi=pmi2 --ntasks=4 bash -c 'exec 3>&\"$PMI_FD\" && PMI_FD=3 exec \"$@\"' bash podman run"),
    ("charliecloud", "srun --mpi=pmi2 --ntasks=4 ch-run --env-no-expand --set-env --set-env=PMIX_MCA_gds=hash"),
    ("apptainer", 'srun --mpi=pmi2 --ntasks=4 apptainer exec "$IMAGE" ./prog'),
])
def test_the_run_line_of_each_runtime_lints(engine, start, tmp_path):
    result = pipeline.optimise(mpich_doc(engine), MPICH)
    assert result.script.body[-1].startswith(start)
    lint(result.script.text, tmp_path, result.script.filename)


def test_a_serial_container_run_is_no_mpi_rank():
    doc = mpich_doc("podman", ranks=1)
    doc["job"]["application"]["launcher"] = "none"
    del doc["job"]["application"]["app_type"]
    result = pipeline.optimise(doc, MPICH)
    assert "--pid=host" not in result.script.body[-1]


def test_the_build_step_is_no_mpi_rank():
    doc = mpich_doc("podman")
    doc["job"]["application"]["build"] = {"src": "https://example.org/p.git", "build_command": "make"}
    body = pipeline.optimise(doc, MPICH).script.body
    build = [line for line in body if "make" in line and "podman run" in line]
    assert build and "PMI_FD" not in build[0] and "--pid=host" not in build[0]
