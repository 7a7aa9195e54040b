"""Distributed (data-parallel) training: the DSL's fields and their errors by path, the plan of ranks and the
allocation, and the exact launch lines per scheduler and container runtime, on CPUs and on GPUs (no GPU here:
GPU lines are checked as words)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest
from helpers import ROOT, with_

from ansible_collections.sodalite.modak.plugins.module_utils import distributed, dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

CONFIG = "job.optimisation.app_type-ai_training.config"
IMAGE = "docker://127.0.0.1:5000/modak/pytorch:2.13.0-cpu"
WRAPPER = 'export RANK="$SLURM_PROCID" LOCAL_RANK="$SLURM_LOCALID" WORLD_SIZE="$SLURM_NTASKS"; exec "$@"'


def ddp_doc(nodes=2, ppn=2, scheduler="slurm", engine="charliecloud", acc=None, gpus=None, **config):
    """A data-parallel training of mnist_cnn.py in a given image (so that the lines do not depend on the catalog)."""
    options = {"job_name": "ddp"}
    if nodes is not None:
        options["node_count"] = nodes
    if gpus is not None:
        options["request_gpus"] = gpus
    conf = {"ai_framework": "pytorch", "distributed_training": True}
    if ppn is not None:
        conf["processes_per_node"] = ppn
    conf.update(config)
    build = {"cpu_type": "x86"}
    if acc:
        build["acc_type"] = acc
    return {"job": {
        "job_options": options,
        "application": {"executable": "python3 mnist_cnn.py", "arguments": "--ddp --steps 5",
                        "container_runtime": IMAGE},
        "target": {"job_scheduler_type": scheduler, "container_engine": engine},
        "optimisation": {"app_type": "ai_training", "enable_opt_build": False, "opt_build": build,
                         "app_type-ai_training": {"config": conf}}}}


def result_of(doc, catalog):
    return pipeline.optimise(doc, catalog)


def run_line(result):
    """The launch line of a script, as words (the shell's reading, variables left as written)."""
    lines = [line for line in result.script.body if line.startswith(("srun ", "timeout ", "ch-run ", "podman ",
                                                                     "apptainer "))]
    assert len(lines) == 1, result.script.text
    return shlex.split(lines[-1])


def directives(result):
    return [line.split(" ", 1)[1] for line in result.script.directives]


def problems(doc):
    with pytest.raises(DslInvalid) as info:
        dsl.parse(doc)
    return {p.path: str(p) for p in info.value.problems}


# -- the DSL ------------------------------------------------------------------------------------------------------

def test_fields_are_read_into_the_request():
    req = dsl.parse(ddp_doc(distributed_backend="gloo", distributed_launch="torchrun"))
    assert req.opt.distributed.processes_per_node == 2
    assert (req.opt.distributed.backend, req.opt.distributed.launch) == ("gloo", "torchrun")


def test_distributed_training_false_plans_no_distributed_launch(catalog):
    doc = with_(ddp_doc(ppn=None), CONFIG + ".distributed_training", False)
    assert dsl.parse(doc).opt.distributed is None
    assert result_of(doc, catalog).settings.distributed is None


@pytest.mark.parametrize("key,value", [("processes_per_node", 2), ("distributed_backend", "gloo"),
                                       ("distributed_launch", "srun")])
def test_a_distributed_field_without_distributed_training_is_refused_by_path(key, value):
    doc = with_(with_(ddp_doc(ppn=None), CONFIG + ".distributed_training", None), CONFIG + "." + key, value)
    found = problems(doc)
    assert "applies only to distributed training" in found[CONFIG + "." + key]


@pytest.mark.parametrize("key,value,words", [
    ("processes_per_node", 0, "out of range"),
    ("processes_per_node", "2", "must be of type integer"),
    ("distributed_backend", "mpi", "not an accepted value"),
    ("distributed_launch", "mpirun", "not an accepted value"),
])
def test_schema_refuses_bad_values_by_path(key, value, words):
    found = problems(with_(ddp_doc(), CONFIG + "." + key, value))
    assert words in found[CONFIG + "." + key]


def test_nccl_without_gpus_is_refused():
    found = problems(ddp_doc(distributed_backend="nccl"))
    assert "nccl needs GPUs" in found[CONFIG + ".distributed_backend"]


def test_processes_per_node_must_equal_the_gpus_per_node():
    found = problems(ddp_doc(ppn=2, acc="nvidia", gpus=4))
    assert "one rank per GPU" in found[CONFIG + ".processes_per_node"]


def test_other_frameworks_are_refused():
    doc = with_(ddp_doc(), CONFIG + ".ai_framework", "tensorflow")
    assert "written for PyTorch" in problems(doc)[CONFIG + ".distributed_training"]


@pytest.mark.parametrize("scheduler", ["local", "none", "torque", "gridengine", "sge"])
def test_several_nodes_where_the_scheduler_starts_no_step_are_refused(scheduler):
    found = problems(ddp_doc(nodes=2, scheduler=scheduler))
    assert "starts none on the other nodes" in found["job.job_options.node_count"]


def test_srun_launch_without_slurm_is_refused():
    found = problems(ddp_doc(nodes=1, scheduler="pbspro", distributed_launch="srun"))
    assert "srun needs Slurm" in found[CONFIG + ".distributed_launch"]


@pytest.mark.parametrize("path,value,words", [
    ("job.application.mpi_ranks", 3, "2 node(s) x 2 process(es) make 4 ranks"),
    ("job.job_options.process_count_per_node", 4, "starts 2 task(s) per node"),
    ("job.job_options.core_count", 2, "starts 4 task(s)"),
    ("job.application.launcher", "mpirun", "starts an MPI program's ranks, not a distributed training's"),
])
def test_counts_that_disagree_with_the_ranks_are_refused(path, value, words):
    assert words in problems(with_(ddp_doc(), path, value))[path]


def test_counts_that_agree_are_accepted():
    doc = with_(with_(with_(ddp_doc(), "job.application.mpi_ranks", 4), "job.job_options.core_count", 4),
                "job.job_options.process_count_per_node", 2)
    assert dsl.parse(doc).opt.distributed is not None


# -- plan: ranks and allocation agree -----------------------------------------------------------------------------

@pytest.mark.parametrize("nodes,ppn", [(1, 1), (1, 4), (2, 2), (3, 1), (4, 8)])
def test_srun_one_task_per_rank_allocates_exactly_the_ranks(nodes, ppn, catalog):
    result = result_of(ddp_doc(nodes=nodes, ppn=ppn), catalog)
    settings = result.settings
    assert settings.distributed.world_size == nodes * ppn == settings.ranks
    assert "--nodes=%d" % nodes in directives(result)
    assert "--ntasks-per-node=%d" % ppn in directives(result)
    words = run_line(result)
    assert words[:4] == ["srun", "--nodes=%d" % nodes, "--ntasks=%d" % (nodes * ppn), "--ntasks-per-node=%d" % ppn]


def test_gpu_job_with_four_gpus_on_one_node_starts_four_ranks(catalog):
    """The issue's case: 4 GPUs on one node started one process (srun --ntasks=1); centres start four."""
    result = result_of(ddp_doc(nodes=1, ppn=None, acc="nvidia", gpus=4, engine="apptainer"), catalog)
    assert result.settings.ranks == 4
    assert directives(result)[:3] == ["--job-name=ddp", "--nodes=1", "--ntasks-per-node=4"]
    assert "--gres=gpu:4" in directives(result)
    assert run_line(result) == [
        "srun", "--nodes=1", "--ntasks=4", "--ntasks-per-node=4", "bash", "-c", WRAPPER, "modak-rank",
        "apptainer", "exec", "--nv", "$IMAGE", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]
    assert "export MODAK_DIST_BACKEND=nccl" in result.script.body


def test_gpu_job_on_two_nodes_has_gres_per_node_equal_to_ranks_per_node(catalog):
    result = result_of(ddp_doc(nodes=2, ppn=None, acc="nvidia", gpus=4, engine="apptainer"), catalog)
    assert "--gres=gpu:4" in directives(result) and "--ntasks-per-node=4" in directives(result)
    assert run_line(result)[:4] == ["srun", "--nodes=2", "--ntasks=8", "--ntasks-per-node=4"]


def test_gpu_type_goes_into_gres(catalog):
    doc = with_(ddp_doc(nodes=1, ppn=None, acc="nvidia", gpus=2), "job.job_options.gpu_type", "a100")
    assert "--gres=gpu:a100:2" in directives(result_of(doc, catalog))


def test_threads_per_rank_become_cpus_per_task(catalog):
    doc = with_(ddp_doc(), "job.application.threads", 4)
    result = result_of(doc, catalog)
    assert "--cpus-per-task=4" in directives(result)
    assert run_line(result)[:5] == ["srun", "--nodes=2", "--ntasks=4", "--ntasks-per-node=2", "--cpus-per-task=4"]


def test_backend_auto_is_gloo_on_cpus(catalog):
    result = result_of(ddp_doc(), catalog)
    assert result.settings.distributed.backend == "gloo"
    assert "export MODAK_DIST_BACKEND=gloo" in result.script.body


# -- launch lines per runtime (srun, one task per rank) ------------------------------------------------------------

RENDEZVOUS = ['MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)"', "export MASTER_ADDR",
              "MASTER_PORT=$((29500 + SLURM_JOB_ID % 1000))"] + list(distributed.PORT_LINES[1:])


def test_slurm_script_sets_the_rendezvous_before_the_launch(catalog):
    body = list(result_of(ddp_doc(), catalog).script.body)
    start = body.index(RENDEZVOUS[0])
    assert body[start:start + len(RENDEZVOUS)] == RENDEZVOUS
    assert body[start + len(RENDEZVOUS) + 1].startswith("srun ") or body[start + len(RENDEZVOUS)].startswith("srun ")


def test_the_rendezvous_port_skips_a_port_another_job_listens_on(tmp_path):
    """The port lines run by bash: a listener on the job's own port moves the job to the next one."""
    import socket   # pylint: disable=import-outside-toplevel
    with socket.socket() as busy:
        for taken in range(29700, 30400, 7):          # a port in the range job ids map to that nothing uses
            try:
                busy.bind(("127.0.0.1", taken))
                break
            except OSError:
                continue
        busy.listen(1)
        job_id = taken - 29500 + 1000 * 1000
        done = subprocess.run(["bash", "-c", "\n".join(RENDEZVOUS[2:]) + '\necho "$MASTER_PORT"'],
                              env={"SLURM_JOB_ID": str(job_id), "PATH": os.environ["PATH"]}, capture_output=True,
                              text=True, check=True)
        assert int(done.stdout) == taken + 1


def test_charliecloud_rank_line(catalog):
    assert run_line(result_of(ddp_doc(), catalog)) == [
        "srun", "--nodes=2", "--ntasks=4", "--ntasks-per-node=2", "bash", "-c", WRAPPER, "modak-rank",
        "ch-run", "--env-no-expand", "--set-env", "--set-env=$MODAK_ENV_FILE", "--private-tmp",
        "-b", "$PWD", "-c", "$PWD", "$IMAGE", "--", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


def test_apptainer_rank_line_passes_the_environment(catalog):
    assert run_line(result_of(ddp_doc(engine="apptainer"), catalog))[8:] == [
        "apptainer", "exec", "$IMAGE", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


def test_podman_rank_line_names_every_rendezvous_variable(catalog):
    assert run_line(result_of(ddp_doc(engine="podman"), catalog))[8:] == [
        "podman", "run", "--rm", "--network=host", "--ipc=host", "$MODAK_PODMAN_USERNS",
        "--env", "OMP_NUM_THREADS", "--env", "MODAK_DIST_BACKEND",
        "--env", "MASTER_ADDR", "--env", "MASTER_PORT", "--env", "RANK", "--env", "LOCAL_RANK", "--env", "WORLD_SIZE",
        "--volume", "$PWD:$PWD", "--workdir", "$PWD", "$IMAGE", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


def test_podman_gpu_rank_line(catalog):
    words = run_line(result_of(ddp_doc(nodes=1, ppn=None, acc="nvidia", gpus=2, engine="podman"), catalog))
    assert words[:4] == ["srun", "--nodes=1", "--ntasks=2", "--ntasks-per-node=2"]
    assert words[words.index("--device"):words.index("--device") + 2] == ["--device", "nvidia.com/gpu=all"]


def bare(doc):
    """The document and an empty catalog: no image, the program runs on the host."""
    return with_(doc, "job.application.container_runtime", None), ImageCatalog([])


def test_bare_rank_line():
    assert run_line(result_of(*bare(ddp_doc()))) == [
        "srun", "--nodes=2", "--ntasks=4", "--ntasks-per-node=2", "bash", "-c", WRAPPER, "modak-rank",
        "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


# -- torchrun per node, and standalone without Slurm ---------------------------------------------------------------

def test_torchrun_per_node_on_slurm(catalog):
    result = result_of(ddp_doc(distributed_launch="torchrun"), catalog)
    assert result.settings.distributed.world_size == 4
    assert directives(result)[1:4] == ["--nodes=2", "--ntasks-per-node=1", "--cpus-per-task=2"]
    assert run_line(result) == [
        "srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--cpus-per-task=2",
        "ch-run", "--env-no-expand", "--set-env", "--set-env=$MODAK_ENV_FILE", "--private-tmp",
        "-b", "$PWD", "-c", "$PWD", "$IMAGE", "--",
        "python3", "-m", "torch.distributed.run", "--nnodes=$SLURM_NNODES", "--nproc-per-node=2",
        "--rdzv-id=$SLURM_JOB_ID", "--rdzv-backend=c10d", "--rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT",
        "--no-python", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


def test_torchrun_gpu_per_node_on_slurm_with_podman(catalog):
    result = result_of(ddp_doc(nodes=2, ppn=None, acc="nvidia", gpus=4, engine="podman",
                               distributed_launch="torchrun"), catalog)
    assert "--gres=gpu:4" in directives(result) and "--ntasks-per-node=1" in directives(result)
    words = run_line(result)
    assert words[:4] == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1"]
    assert ["--env", "MASTER_ADDR", "--env", "MASTER_PORT"] == words[words.index("MASTER_ADDR") - 1:
                                                                     words.index("MASTER_PORT") + 1]
    assert "RANK" not in words    # torchrun sets the ranks itself
    assert words[words.index("torch.distributed.run") + 2] == "--nproc-per-node=4"


def test_a_program_not_run_by_python_gets_torchrun(catalog):
    doc = with_(ddp_doc(distributed_launch="torchrun"), "job.application.executable", "./train")
    words = run_line(result_of(doc, catalog))
    assert words[words.index("--") + 1] == "torchrun"
    assert words[-5:] == ["--no-python", "./train", "--ddp", "--steps", "5"]


def test_local_runs_torchrun_standalone(catalog):
    doc = with_(ddp_doc(nodes=1, scheduler="local", engine="apptainer"), "job.job_options.wall_time_limit", 600)
    result = result_of(doc, catalog)
    assert run_line(result) == [
        "timeout", "--signal=TERM", "--kill-after=30", "600s", "apptainer", "exec", "$IMAGE",
        "python3", "-m", "torch.distributed.run", "--standalone", "--nnodes=1", "--nproc-per-node=2",
        "--no-python", "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]
    assert not any("MASTER_ADDR" in line for line in result.script.body)


@pytest.mark.parametrize("scheduler,resource", [
    ("pbspro", "#PBS -l select=1:ncpus=4:mpiprocs=1"),
    ("gridengine", "#$ -pe smp 4"),
])
def test_batch_schedulers_run_torchrun_standalone_on_one_node_with_every_ranks_cpus(scheduler, resource):
    result = result_of(*bare(ddp_doc(nodes=1, ppn=4, scheduler=scheduler)))
    assert resource in result.script.directives
    assert run_line_of_bare(result) == [
        "python3", "-m", "torch.distributed.run", "--standalone", "--nnodes=1", "--nproc-per-node=4", "--no-python",
        "python3", "mnist_cnn.py", "--ddp", "--steps", "5"]


def run_line_of_bare(result):
    return shlex.split([line for line in result.script.body if "torch.distributed.run" in line][0])


def test_settings_say_the_distributed_plan(catalog):
    settings = result_of(ddp_doc(), catalog).settings.as_dict()
    assert settings["distributed"] == {"launch": "srun", "backend": "gloo", "nodes": 2, "processes_per_node": 2,
                                       "world_size": 4}


SHELLCHECK = shutil.which("shellcheck") or os.path.join(ROOT, ".venv", "bin", "shellcheck")


@pytest.mark.parametrize("engine", ["charliecloud", "apptainer", "podman", "bare"])
@pytest.mark.parametrize("launch,scheduler,nodes", [("srun", "slurm", 2), ("torchrun", "slurm", 2),
                                                    ("accelerate", "slurm", 2), ("lightning", "slurm", 2),
                                                    ("deepspeed", "slurm", 2), ("deepspeed", "local", 1),
                                                    ("auto", "local", 1), ("auto", "pbspro", 1),
                                                    ("torchrun", "pbspro", 2), ("accelerate", "pbspro", 2),
                                                    ("deepspeed", "pbspro", 2)])
def test_scripts_pass_bash_n_and_shellcheck(engine, launch, scheduler, nodes, catalog, tmp_path):
    doc = ddp_doc(nodes=nodes, scheduler=scheduler, engine="apptainer" if engine == "bare" else engine,
                  distributed_launch=launch)
    result = result_of(*bare(doc)) if engine == "bare" else result_of(doc, catalog)
    path = tmp_path / "job.sh"
    path.write_text(result.script.text)
    subprocess.run(["bash", "-n", str(path)], check=True)
    lint = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", str(path)], capture_output=True,
                          text=True, check=False)
    assert lint.returncode == 0, lint.stdout


def test_distributed_fields_in_inference_are_refused_by_path():
    doc = ddp_doc()
    opt = doc["job"]["optimisation"]
    opt["app_type"] = "ai_inference"
    opt["app_type-ai_inference"] = opt.pop("app_type-ai_training")
    found = problems(doc)
    base = "job.optimisation.app_type-ai_inference.config."
    assert "applies only to training" in found[base + "distributed_training"]
    assert "applies only to training" in found[base + "processes_per_node"]


# -- accelerate launch: one per node (Hugging Face Accelerate's Slurm example), exact argv --------------------------

ACCELERATE = ["--multi_gpu", "--num_processes=4", "--num_machines=2", "--rdzv_backend=static",
              "--main_process_ip=$MASTER_ADDR", "--main_process_port=$MASTER_PORT"]
NODE = 'n=$1; shift; exec "${@:1:n}" --machine_rank="$SLURM_NODEID" "${@:n+1}"'


def test_the_node_wrapper_puts_each_tasks_node_id_before_the_program():
    done = subprocess.run(["bash", "-c", NODE, "modak-node", "3", "printf", "[%s]", "launch", "train.py", "x"],
                          env={"SLURM_NODEID": "1", "PATH": os.environ["PATH"]}, capture_output=True, text=True,
                          check=True)
    assert done.stdout == "[launch][--machine_rank=1][train.py][x]"


def test_accelerate_per_node_on_slurm_in_an_image(catalog):
    result = result_of(ddp_doc(distributed_launch="accelerate"), catalog)
    assert directives(result)[1:4] == ["--nodes=2", "--ntasks-per-node=1", "--cpus-per-task=2"]
    assert run_line(result) == [
        "srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--cpus-per-task=2", "bash", "-c", NODE,
        "modak-node", "20",
        "ch-run", "--env-no-expand", "--set-env", "--set-env=$MODAK_ENV_FILE", "--private-tmp",
        "-b", "$PWD", "-c", "$PWD", "$IMAGE", "--",
        "python3", "-m", "accelerate.commands.launch"] + ACCELERATE + ["mnist_cnn.py", "--ddp", "--steps", "5"]
    assert "MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)\"" in result.script.body


def test_accelerate_gpu_nodes_with_podman_pass_the_rendezvous_by_name(catalog):
    result = result_of(ddp_doc(nodes=2, ppn=None, acc="nvidia", gpus=4, engine="podman",
                               distributed_launch="accelerate"), catalog)
    words = run_line(result)
    assert ["--env", "MASTER_ADDR", "--env", "MASTER_PORT"] == words[words.index("MASTER_ADDR") - 1:
                                                                     words.index("MASTER_PORT") + 1]
    assert "--num_processes=8" in words and "--num_machines=2" in words and "RANK" not in words


@pytest.mark.parametrize("executable,tail", [
    ("./train", ["8", "accelerate", "launch"] + ACCELERATE + ["--no_python", "./train", "--ddp", "--steps", "5"]),
    ("python3 -m trainer.main", ["9", "python3", "-m", "accelerate.commands.launch"] + ACCELERATE
     + ["--module", "trainer.main", "--ddp", "--steps", "5"])])
def test_accelerate_runs_any_program_and_python_modules(executable, tail):
    doc = with_(ddp_doc(distributed_launch="accelerate"), "job.application.executable", executable)
    words = run_line(result_of(*bare(doc)))
    assert words[5:9] == ["bash", "-c", NODE, "modak-node"] and words[9:] == tail


def test_accelerate_on_one_node_without_slurm_uses_a_free_local_port():
    result = result_of(*bare(ddp_doc(nodes=1, ppn=2, scheduler="local", distributed_launch="accelerate")))
    line = [line for line in result.script.body if "accelerate.commands.launch" in line][0]
    words = shlex.split(line)
    assert words[words.index("python3"):] == [
        "python3", "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes=2", "--num_machines=1",
        "--rdzv_backend=c10d", "--main_process_ip=localhost", "--main_process_port=0", "mnist_cnn.py", "--ddp",
        "--steps", "5"]
    assert "srun" not in words
    assert not any("MASTER_ADDR" in line for line in result.script.body)


def test_accelerate_across_nodes_without_a_node_step_is_refused_by_path():
    found = problems(ddp_doc(nodes=2, scheduler="torque", distributed_launch="accelerate"))
    assert "job.job_options.node_count" in found


@pytest.mark.parametrize("name", ["RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "NODE_RANK"])
def test_rendezvous_names_in_the_environment_are_refused_by_path(name):
    doc = with_(ddp_doc(), "job.application.environment", {name: "0", "NCCL_DEBUG": "INFO"})
    found = problems(doc)
    assert list(found) == ["job.application.environment.%s" % name]
    assert "each rank" in found["job.application.environment.%s" % name]


def test_fabric_settings_in_the_environment_stay(catalog):
    doc = with_(ddp_doc(), "job.application.environment", {"NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "ib0"})
    body = result_of(doc, catalog).script.body
    assert "export NCCL_DEBUG=INFO" in body and "export NCCL_SOCKET_IFNAME=ib0" in body


def test_the_first_node_of_a_long_node_list_is_read_without_sigpipe(tmp_path):
    """Hardening, round five, item 15: under `set -eo pipefail`, `scontrol show hostnames | head -n 1` ended the job
    with status 141 when scontrol wrote past what head read (14 of 20 runs at 500 nodes). A 10,000-name list: the
    first node, status 0, every time."""
    from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.slurm import Slurm
    fake = tmp_path / "scontrol"
    fake.write_text("#!/bin/sh\nexec seq -f 'nid%05g' 1 10000\n")
    fake.chmod(0o755)
    script = 'set -eo pipefail\nMASTER_ADDR="%s"\necho "$MASTER_ADDR"\n' % Slurm.first_node_expr
    env = dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ["PATH"]), SLURM_JOB_NODELIST="nid[00001-10000]")
    for _attempt in range(5):
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=False, timeout=30)
        assert (done.returncode, done.stdout) == (0, "nid00001\n"), done.stderr


def _port_probe(listen_on, ports, job):
    """Runs the rendezvous port lines for job number ``job`` while listeners hold ``ports`` on ``listen_on``; the
    finished bash."""
    import socket
    listeners = []
    try:
        for port in ports:
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((listen_on, port))
            except OSError:
                listener.close()
                pytest.skip("port %d is taken on this machine" % port)
            listener.listen(1)
            listeners.append(listener)
        lines = [line.format(job="MODAK_JOB") if "{job}" in line else line for line in distributed.PORT_LINES]
        script = "set -eo pipefail\n" + "\n".join(lines) + '\necho "$MASTER_PORT"\n'
        env = dict(os.environ, MODAK_JOB=str(job))
        return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=False, timeout=60)
    finally:
        for listener in listeners:
            listener.close()


def test_the_rendezvous_port_skips_a_listener_on_any_address_of_the_node():
    """Hardening, round five, item 13: the probe connected to 127.0.0.1 only; another user listening on the node's
    own address kept the port, the store's bind failed and ranks reached her listener."""
    if shutil.which("ss") is None or shutil.which("hostname") is None:
        pytest.skip("ss (iproute2) lists the node's listeners")
    addresses = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False).stdout.split()
    address = next((a for a in addresses if "." in a and not a.startswith("127.")), None)
    if address is None:
        pytest.skip("this host has no address but loopback")
    done = _port_probe(address, [29777], 277)
    assert done.returncode == 0 and done.stdout.strip() == "29778", done.stderr


def test_no_free_rendezvous_port_stops_the_job_instead_of_taking_a_busy_one():
    """The loop stopped at 30999 without probing it, and took it busy or not."""
    done = _port_probe("127.0.0.1", range(30499, 31000), 999)
    assert done.returncode == 1 and "every rendezvous port up to 30999 is in use" in done.stderr, done.stderr
