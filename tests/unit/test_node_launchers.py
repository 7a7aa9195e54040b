"""Launchers started once per node by the scheduler's step (Scheduler.step_words, the NODE_STEPS capability):
torchrun, accelerate and DeepSpeed under Slurm's srun and PBS Pro's mpiexec --ppn 1 (the form of PBS Pro's PALS
systems, ALCF Polaris), each with its rendezvous read from the allocation when the job runs. The lines are exact
text; bash evaluates the parts that read the allocation (ports from the job's number, host files, each node's
index inserted in its own task)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline, shell
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

EMPTY = ImageCatalog([])
PROGRAM = ["python3", "-m", "torch.distributed.run"]


def training(scheduler, launcher, nodes=2, ppn=2, **options):
    return {"job": {
        "job_options": dict({"job_name": "ddp", "node_count": nodes}, **options),
        "application": {"executable": "python3 train.py", "arguments": "--epochs 1", "container_runtime": "",
                        "launcher": launcher},
        "target": {"job_scheduler_type": scheduler},
        "optimisation": {"app_type": "ai_training", "enable_opt_build": False, "opt_build": {"cpu_type": "x86"},
                         "app_type-ai_training": {"config": {"ai_framework": "pytorch", "distributed_training": True,
                                                             "processes_per_node": ppn}}}}}


def script(doc):
    return pipeline.optimise(doc, EMPTY).script.text


def run_line(text):
    return text.rstrip().splitlines()[-1]


def test_only_slurm_and_pbs_pro_start_a_step_on_each_node():
    assert [name for name in registry.NAMES if registry.capable(name, registry.NODE_STEPS)] == ["slurm", "pbspro"]


def test_torchrun_per_node_under_pbs_pro_is_mpiexec_ppn_1_scattered_over_the_nodes():
    text = script(training("pbspro", "torchrun"))
    assert "#PBS -l select=2:ncpus=2:mpiprocs=1\n#PBS -l place=scatter\n" in text
    assert '\nMASTER_ADDR="$(head -n 1 "$PBS_NODEFILE")"\nexport MASTER_ADDR\n' in text
    assert "\nMASTER_PORT=$((29500 + $(( ${PBS_JOBID%%[.[]*} + ${PBS_ARRAY_INDEX:-0} )) % 1000))\n" in text
    assert run_line(text) == (
        'mpiexec -n 2 --ppn 1 --depth=2 --cpu-bind depth python3 -m torch.distributed.run --nnodes=2 '
        '--nproc-per-node=2 --rdzv-id="$(( ${PBS_JOBID%%[.[]*} + ${PBS_ARRAY_INDEX:-0} ))" --rdzv-backend=c10d '
        '--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT" --no-python python3 train.py --epochs 1')


def test_auto_across_pbs_pro_nodes_is_torchrun_per_node_and_one_node_stays_standalone():
    assert run_line(script(training("pbspro", "auto"))).startswith("mpiexec -n 2 --ppn 1 ")
    one = run_line(script(training("pbspro", "auto", nodes=1)))
    assert one.startswith("python3 -m torch.distributed.run --standalone --nnodes=1 --nproc-per-node=2 ")


PORTS = [("1234.pbs01", None, 29734), ("1234[7].pbs01", "7", 29741), ("1234[8].pbs01", "8", 29742),
         ("98765", None, 30265)]


@pytest.mark.parametrize("job_id,index,port", PORTS)
def test_the_pbs_pro_port_follows_the_job_number(job_id, index, port):
    """An array's elements (PBS_ARRAY_INDEX) each take a port of their own."""
    text = script(training("pbspro", "torchrun"))
    lines = [line for line in text.splitlines() if line.startswith("MASTER_PORT=$((")]
    env = dict(os.environ, PBS_JOBID=job_id)
    env.pop("PBS_ARRAY_INDEX", None)
    if index is not None:
        env["PBS_ARRAY_INDEX"] = index
    out = subprocess.run(["bash", "-c", lines[0] + '; echo "$MASTER_PORT"'], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert int(out) == port


def test_accelerate_per_node_under_pbs_pro_reads_its_machine_rank_from_mpiexec():
    line = run_line(script(training("pbspro", "accelerate")))
    words = shlex.split(line)
    assert words[:9] == ["mpiexec", "-n", "2", "--ppn", "1", "--depth=2", "--cpu-bind", "depth", "bash"]
    wrapper, count = words[10], words[12]
    inner = words[13:]
    # the wrapper runs in each node's process: PMI_RANK is the node's index with one process per node
    out = subprocess.run(["bash", "-c", wrapper, "modak-node", count, "echo"] + inner[1:],
                         env=dict(os.environ, PMI_RANK="1"), capture_output=True, text=True, check=True).stdout
    assert "accelerate.commands.launch --multi_gpu --num_processes=4 --num_machines=2 --rdzv_backend=static " \
           "--main_process_ip=$MASTER_ADDR --main_process_port=$MASTER_PORT --machine_rank=1 train.py" in out


def test_deepspeed_per_node_under_slurm_runs_no_ssh_over_a_host_file_of_the_allocation():
    text = script(training("slurm", "deepspeed"))
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n" in text
    made = 'MODAK_DEEPSPEED_HOSTS="$(mktemp "$MODAK_WORKDIR/deepspeed-hosts.XXXXXX")"'
    host_line = 'scontrol show hostnames "$SLURM_JOB_NODELIST" | sed \'s/$/ slots=2/\' > "$MODAK_DEEPSPEED_HOSTS"'
    assert "\n" + made + "\n" in text and "\n" + host_line + "\n" in text
    line = run_line(text)
    assert line == (
        "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=2 bash -c "
        "'n=$1; shift; exec \"${@:1:n}\" --node_rank=\"$SLURM_NODEID\" \"${@:n+1}\"' modak-node 7 "
        'python3 -m deepspeed.launcher.runner --no_ssh --hostfile="$MODAK_DEEPSPEED_HOSTS" '
        '--master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" train.py --epochs 1')


def host_file_lines(text):
    """The script's lines that make the DeepSpeed host file and its EXIT trap, in their order."""
    return [line for line in text.splitlines() if not line.startswith("#") and "deepspeed.launcher.runner" not in line
            and ("deepspeed-hosts" in line or "MODAK_HOSTS_EXIT_TRAP" in line or "MODAK_DEEPSPEED_HOSTS" in line)]


def hosts_read(text, cwd, env, fake=""):
    """Run the host file's lines in ``cwd`` with ``env``, then print the file the launch names (its --hostfile word,
    as the script's shell expands it); (the run, its output)."""
    word = re.search(r'--hostfile=("[^"]*")', run_line(text)).group(1)
    body = "\n".join([fake] + host_file_lines(text) + ["cat %s" % word])
    done = subprocess.run(["bash", "-c", body], cwd=str(cwd), env=env, capture_output=True, text=True, check=False)
    return done, done.stdout


def test_the_deepspeed_host_file_lists_each_node_once_with_its_ranks(tmp_path):
    text = script(training("slurm", "deepspeed", nodes=3, ppn=4))
    fake = "scontrol() { printf '%s\\n' mn1 mn2 mn3; }"
    done, out = hosts_read(text, tmp_path, dict(os.environ, SLURM_JOB_ID="41"), fake)
    assert done.returncode == 0, done.stderr
    assert out == "mn1 slots=4\nmn2 slots=4\nmn3 slots=4\n"
    assert os.listdir(str(tmp_path)) == []                     # removed when the script exits


def test_the_deepspeed_host_file_under_pbs_pro_keeps_the_node_file_order_once_each(tmp_path):
    text = script(training("pbspro", "deepspeed"))
    nodes = tmp_path / "nodefile"
    nodes.write_text("x3004c0s7b1n0\nx3004c0s7b1n0\nx3001c0s1b0n0\nx3001c0s1b0n0\n")
    env = dict(os.environ, PBS_NODEFILE=str(nodes), PBS_JOBID="77.pbs")
    env.pop("PBS_ARRAY_INDEX", None)
    done, out = hosts_read(text, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert out == "x3004c0s7b1n0 slots=2\nx3001c0s1b0n0 slots=2\n"
    assert "--node_rank=\"$PMI_RANK\"" in run_line(text)


@pytest.mark.parametrize("scheduler, env", [("slurm", {"SLURM_JOB_ID": "4242"}),
                                            ("pbspro", {"PBS_JOBID": "4242.pbs"})])
def test_a_link_planted_at_a_host_file_name_is_never_written_through(tmp_path, scheduler, env):
    """In a job directory that a group shares (3770), another member plants deepspeed-hosts.<id> links to a file of
    the user's for the coming job numbers: the host file is a fresh file of mktemp's (O_EXCL), never one of theirs,
    and the link's target keeps what it held."""
    text = script(training(scheduler, "deepspeed"))
    secret = tmp_path / "private" / ".bashrc"
    secret.parent.mkdir()
    secret.write_text("the user's own\n")
    secret.chmod(0o600)
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    for number in range(4240, 4245):
        os.symlink(str(secret), str(job_dir / ("deepspeed-hosts.%d" % number)))
    nodes = tmp_path / "nodefile"
    nodes.write_text("n1\nn1\nn2\nn2\n")
    run_env = dict(os.environ, PBS_NODEFILE=str(nodes), **env)
    run_env.pop("PBS_ARRAY_INDEX", None)
    done, out = hosts_read(text, job_dir, run_env, "scontrol() { printf '%s\\n' n1 n2; }")
    assert done.returncode == 0, done.stderr
    assert out == "n1 slots=2\nn2 slots=2\n"
    assert secret.read_text() == "the user's own\n"
    assert sorted(os.listdir(str(job_dir))) == ["deepspeed-hosts.%d" % n for n in range(4240, 4245)]


def test_deepspeed_on_one_node_without_a_step_takes_the_ranks_and_a_port_of_the_job():
    text = script(training("local", "deepspeed", nodes=1))
    assert "\nMASTER_PORT=$((29500 + $$ % 1000))\n" in text
    assert run_line(text) == ('python3 -m deepspeed.launcher.runner --num_gpus=2 --master_port="$MASTER_PORT" '
                              "train.py --epochs 1")


def test_a_program_that_is_no_python_script_gets_deepspeeds_no_python():
    doc = training("slurm", "deepspeed")
    doc["job"]["application"]["executable"] = "./train"
    words = shlex.split(run_line(script(doc)))
    assert words[10:] == ["deepspeed", "--no_ssh", '--hostfile=$MODAK_DEEPSPEED_HOSTS',
                          "--master_addr=$MASTER_ADDR", "--master_port=$MASTER_PORT", "--no_python", "./train",
                          "--epochs", "1"]


@pytest.mark.parametrize("scheduler", ["torque", "gridengine", "local"])
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate", "deepspeed"])
def test_per_node_launchers_across_nodes_need_a_scheduler_step(scheduler, launcher):
    with pytest.raises(DslInvalid) as info:
        pipeline.optimise(training(scheduler, launcher), EMPTY)
    found = {p.path: str(p) for p in info.value.problems}
    assert "starts none on the other nodes" in found["job.job_options.node_count"]


@pytest.mark.parametrize("launcher", ["srun", "lightning"])
def test_per_rank_launchers_stay_slurms(launcher):
    with pytest.raises(DslInvalid) as info:
        pipeline.optimise(training("pbspro", launcher), EMPTY)
    assert "needs Slurm" in str(info.value)


@pytest.mark.parametrize("placement", ["pack", "free"])
def test_a_placement_that_shares_nodes_is_refused_for_a_training_across_pbs_pro_nodes(placement):
    with pytest.raises(DslInvalid) as info:
        pipeline.optimise(training("pbspro", "torchrun", placement=placement), EMPTY)
    assert [p.path for p in info.value.problems] == ["job.job_options.placement"]
    text = script(training("pbspro", "torchrun", placement="scatter"))
    assert "#PBS -l place=scatter\n" in text


def test_a_per_node_launcher_given_by_auto_takes_no_signal_that_kills_torchrun():
    """job.resilience's signal under launcher auto across PBS Pro nodes: auto is torchrun per node there, which dies
    on USR1."""
    doc = training("pbspro", "auto", wall_time_limit="01:00:00")
    doc["job"]["resilience"] = {"signal": "USR1"}
    with pytest.raises(DslInvalid) as info:
        pipeline.optimise(doc, EMPTY)
    assert "job.resilience.signal" in [p.path for p in info.value.problems]


@pytest.mark.parametrize("launcher, runner", [("deepspeed", "deepspeed.launcher.runner"),
                                              ("accelerate", "accelerate.commands.launch")])
def test_the_pythons_u_is_left_to_a_launcher_that_starts_every_rank_with_it(launcher, runner):
    """DeepSpeed's and Accelerate's runners start each rank as ``python -u script``: the program's ``-u`` is theirs,
    and written before the script it would be read as the runner's own (unknown) option."""
    doc = training("slurm", launcher)
    doc["job"]["application"]["executable"] = "python3 -u train.py"
    line = run_line(script(doc))
    assert " -m %s " % runner in line and line.endswith(" train.py --epochs 1")
    assert " -u " not in line


@pytest.mark.parametrize("launcher", ["deepspeed", "accelerate"])
@pytest.mark.parametrize("executable, arguments, path", [
    ("python3 -X dev train.py", "--epochs 1", "job.application.executable"),
    ("python3 -u -W error train.py", "", "job.application.executable"),
    ("python3", "-O train.py --epochs 1", "job.application.arguments"),
    ("python3", ["-B", "train.py"], "job.application.arguments"),
])
def test_another_flag_of_the_python_is_refused_where_it_is_written(launcher, executable, arguments, path):
    doc = training("local", launcher, nodes=1)
    doc["job"]["application"].update(executable=executable, arguments=arguments)
    with pytest.raises(DslInvalid) as info:
        pipeline.optimise(doc, EMPTY)
    found = {p.path: p for p in info.value.problems}
    assert "is a flag of the Python, which %s does not pass on" % launcher in found[path].message, found
    assert "PYTHONWARNINGS" in found[path].hint


def test_torchrun_passes_the_pythons_flags_to_every_rank():
    doc = training("slurm", "torchrun")
    doc["job"]["application"]["executable"] = "python3 -X dev train.py"
    assert run_line(script(doc)).endswith(" --no-python python3 -X dev train.py --epochs 1")


@pytest.mark.parametrize("scheduler, env", [("slurm", {"SLURM_JOB_ID": "41"}), ("pbspro", {"PBS_JOBID": "77.pbs"})])
def test_the_deepspeed_host_file_is_removed_when_the_script_exits(tmp_path, scheduler, env):
    """The script's lines from the host file to a failing end, after a site's EXIT trap (target.setup) and a
    container runtime's (Charliecloud's variables file): the file is there for the launch, gone after the script,
    the other traps still run and the exit status is kept; another job's host file stays."""
    text = script(training(scheduler, "deepspeed"))
    own = host_file_lines(text)
    assert own[0] == 'MODAK_DEEPSPEED_HOSTS="$(mktemp "$MODAK_WORKDIR/deepspeed-hosts.XXXXXX")"'
    assert own[1] == 'MODAK_HOSTS_EXIT_TRAP="$(trap -p EXIT)"' and len(own) == 5
    assert own[4].endswith('> "$MODAK_DEEPSPEED_HOSTS"')
    (tmp_path / "deepspeed-hosts.40").write_text("other job\n")
    nodes = tmp_path / "nodefile"
    nodes.write_text("n1\nn1\nn2\nn2\n")
    fake = "scontrol() { printf '%s\\n' n1 n2; }"
    before = ["trap 'echo site trap' EXIT", "MODAK_ENV_FILE=env-file", "touch env-file"] + shell.exit_trap_lines(
        'rm -f "$MODAK_ENV_FILE"')
    body = "\n".join([fake] + before + own + ['cat "$MODAK_DEEPSPEED_HOSTS"', "exit 3"])
    run_env = dict(os.environ, PBS_NODEFILE=str(nodes), **env)
    run_env.pop("PBS_ARRAY_INDEX", None)
    done = subprocess.run(["bash", "-c", body], cwd=str(tmp_path), env=run_env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "n1 slots=2\nn2 slots=2\nsite trap\n"
    assert sorted(os.listdir(str(tmp_path))) == ["deepspeed-hosts.40", "nodefile"]
