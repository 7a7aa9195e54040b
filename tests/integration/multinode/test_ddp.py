"""Data-parallel training across real nodes: modak writes examples/pytorch-ddp-slurm.yaml's job (2 nodes x 2 ranks,
one srun task per rank), it is submitted unchanged to the multi-node Slurm and trains inside modak's PyTorch CPU
image, built with Charliecloud from modak's recipe on the mmdebstrap base (as `make demo` builds it, sharing its
build storage, so an unchanged recipe is not built again), pushed to a local TLS registry; the job pulls it from
there into the shared image directory.
The job must end COMPLETED, every rank must report the world size 4 and the same final loss, and the ranks must sit
on two distinct nodes.

A bare run (torch on the host) checks the same launch without a container: the host needs torch 2.13.0 in
MODAK_TORCH_PYTHON's Python (default: a venv /var/tmp/modak-ddp-venv made here with pip install torch==2.13.0).

Runs as root. The demo's storage is held (services.exclusive) while the module uses it, and the tests that use it
run on one worker (the group ``modak-demo.ch`` of tests/services.py).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import services
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# the first test in modak's image pays its build and push (216-337 s measured) and may wait for the demo's storage
pytestmark = pytest.mark.timeout(1500)

EXAMPLE = os.path.join(ROOT, "examples", "pytorch-ddp-slurm.yaml")
WORKLOAD = (os.path.join(ROOT, "benchmarks", "workload", "mnist_cnn.py"),
            os.path.join(ROOT, "plugins", "module_utils", "perf", "hardware.py"))
# the demo's build storage and registry data: an image built by `make demo` (or an earlier run) is reused
CH_STORAGE = "/var/tmp/modak-demo.ch"
REGISTRY_DATA = "/var/cache/modak/demo-registry"
WHEELS = os.environ.get("MODAK_WHEELS", "/opt/wheels")
TORCH_VENV = "/var/tmp/modak-ddp-venv"
LIGHTNING = "lightning==2.6.6"
LIGHTNING_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "lightning_train.py")
# DeepSpeed from its source package (PyPI publishes no wheel), its compiled ops left to build on first use
DEEPSPEED = "deepspeed==0.19.8"
DEEPSPEED_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "deepspeed_train.py")
RANK_LINE = re.compile(r"^ddp rank=(\d+) world_size=(\d+) local_rank=(\d+) node=(\S+) backend=(\S+) "
                       r"threads=(\d+) final_loss=(\S+)$", re.M)
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


def _run(argv, env=None, timeout=1800, cwd=None):
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, "%s failed (rc %d):\n%s\n%s" % (
        argv[:3], proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:])
    return proc.stdout


def resolvable_node_names(nodes):
    """The nodes' names resolve, as on a cluster: MASTER_ADDR is the first node's name (scontrol show hostnames).
    The test nodes all run on this host, so their names are added to /etc/hosts once."""
    missing = []
    for node in nodes:
        try:
            socket.gethostbyname(node)
        except OSError:
            missing.append(node)
    if missing:
        with open("/etc/hosts", "a") as handle:
            handle.write("127.0.0.1 %s  # modak multi-node test cluster\n" % " ".join(missing))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(multinode):
    resolvable_node_names(multinode.nodes)
    return multinode


@pytest.fixture(scope="module")
def registry(multinode):
    """Debian's docker-registry with TLS on 127.0.0.1 (ch-image speaks HTTPS only), storage kept between runs; its
    certificate lies where the nodes see it (their /tmp is their own), for the jobs' ch-image pull."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="registry-", dir=multinode.workdir))
    os.makedirs(REGISTRY_DATA, exist_ok=True)
    port = free_port()
    _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
          "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(work / "key.pem"), "-out", str(work / "cert.pem")])
    certs = work / "certs"        # podman --cert-dir: the CA as ca.crt, nothing else (the key stays outside)
    certs.mkdir()
    shutil.copy(str(work / "cert.pem"), str(certs / "ca.crt"))
    (work / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n"
        "  addr: 127.0.0.1:%d\n  tls:\n    certificate: %s\n    key: %s\n"
        % (REGISTRY_DATA, port, work / "cert.pem", work / "key.pem"))
    with open(str(work / "registry.log"), "w") as log:
        proc = subprocess.Popen(["docker-registry", "serve", str(work / "config.yml")], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield {"host": "127.0.0.1:%d" % port, "ca": str(certs / "ca.crt")}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


ACCELERATE = "accelerate==1.15.0"      # as benchmarks/requirements-bench.txt pins it
DDP_WHEELS = "/var/cache/modak/ddp-wheels"


@pytest.fixture(scope="module")
def ddp_image(registry, multinode, tmp_path_factory):
    """modak's PyTorch image from the example's recipe with Accelerate beside torch (opt_build.python_packages):
    base (scripts/base-image), wheels, Charliecloud build, push; returns the catalog file that names the pushed
    image, and the environment that reaches it."""
    if os.geteuid() != 0:
        pytest.fail("the DDP test builds images and runs Slurm: it must run as root", pytrace=False)
    # the demo's build storage: the build here and the Charliecloud job's pull use it, and so does `make demo`
    with services.exclusive("modak-demo.ch"):
        work = tmp_path_factory.mktemp("ddp-image")
        env = dict(os.environ, PATH=SYSTEM_PATH + ":" + os.path.join(ROOT, ".venv", "bin"), USER="root",
                   CH_IMAGE_STORAGE=CH_STORAGE, REQUESTS_CA_BUNDLE=registry["ca"],
                   ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0")
        # --podman: podman (and its storage's copy of the base) for the Podman run
        base = re.search(r"^name=(\S+)$", _run([os.path.join(ROOT, "scripts", "base-image"), "--charliecloud",
                                                "--podman"], env=env), re.M).group(1)
        services.podman_settings()
        _run([os.path.join(ROOT, "scripts", "apt-install"), "pigz"])   # the push compresses on all cores
        # kept between runs: the same files each time, so ch-image's build cache finds the image's layers
        wheels = DDP_WHEELS
        _run([os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pip", "download", "--quiet", "--only-binary=:all:",
              "--dest", str(wheels), "--find-links", WHEELS, "torch==2.13.0", ACCELERATE], env=dict(os.environ))
        dsl = work / "ddp-accelerate.yaml"
        doc = yaml.safe_load(open(EXAMPLE))
        doc["job"]["optimisation"]["opt_build"]["python_packages"] = [ACCELERATE]
        dsl.write_text(yaml.safe_dump(doc))
        catalog = work / "catalog.yaml"
        playbook = work / "build.yml"
        playbook.write_text(yaml.safe_dump([{
            "name": "Build modak's PyTorch image for the DDP example and push it", "hosts": "localhost",
            "connection": "local", "gather_facts": False,
            "tasks": [{"name": "Build", "ansible.builtin.include_role": {"name": "sodalite.modak.container_build"},
                       "vars": {"container_build_dsl_file": str(dsl),
                                "container_build_output_dir": str(work / "recipe"),
                                "container_build_engine": "charliecloud", "container_build_base_image": base,
                                "container_build_wheels": str(wheels),
                                "container_build_push_to": "docker://%s/modak/pytorch:2.13.0-cpu" % registry["host"],
                                "container_build_catalog": str(catalog), "container_build_poll": 10}}]}]))
        _run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), str(playbook),
              "-e", "ansible_python_interpreter=%s" % os.path.join(ROOT, ".venv", "bin", "python")], env=env)
        try:
            yield {"catalog": str(catalog), "env": env}
        finally:
            # the Charliecloud job pulled the image under this run's registry port into the shared build storage:
            # remove that copy (1.3 GB each run; the registry's port differs every time)
            subprocess.run(["ch-image", "delete", "%s/modak/pytorch:2.13.0-cpu" % registry["host"]], env=env,
                           capture_output=True, timeout=300, check=False)
            # the image directory the Charliecloud jobs pulled into (the module's jobs share it)
            shutil.rmtree(os.path.join(multinode.workdir, "images"), ignore_errors=True)
            # and podman's copy, which the Podman run pulled
            subprocess.run(["podman", "rmi", "--ignore", "%s/modak/pytorch:2.13.0-cpu" % registry["host"]], env=env,
                           capture_output=True, timeout=300, check=False)


def write_job(directory, catalog=None, overrides=None):
    """modak writes the example's job script into ``directory`` (bin/modak optimise); returns its path."""
    doc = yaml.safe_load(open(EXAMPLE))
    for path, value in (overrides or {}).items():
        node = doc
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(keys[-1], None)      # None: the field is left out
        else:
            node[keys[-1]] = value
    dsl = os.path.join(directory, "ddp.yaml")
    with open(dsl, "w") as handle:
        yaml.safe_dump(doc, handle)
    argv = [os.path.join(ROOT, ".venv", "bin", "python"), os.path.join(ROOT, "bin", "modak"), "optimise", dsl,
            "-o", directory]
    if catalog:
        argv.extend(["--catalog", catalog])
    _run(argv)
    for name in WORKLOAD:
        shutil.copy(name, directory)
    return os.path.join(directory, doc["job"]["job_options"]["job_name"] + ".sbatch")


def submit_and_wait(cluster, script, env=None, timeout=900):
    """sbatch the script as written; the job's final state (scontrol) and its output."""
    env = dict(env or cluster, SLURM_CONF=cluster.conf)
    directory = os.path.dirname(script)
    job = subprocess.run(["sbatch", "--parsable", script], env=env, cwd=directory, capture_output=True, text=True,
                         timeout=60, check=False)
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    deadline, state = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        shown = subprocess.run(["scontrol", "show", "job", job_id], env=env, capture_output=True, text=True,
                               timeout=30, check=False).stdout
        state = (re.search(r"JobState=(\S+)", shown) or re.search("()", "")).group(1)
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            break
        time.sleep(2)
    with open(os.path.join(directory, "mnist-ddp-%s.out" % job_id)) as handle:
        return state, handle.read()


def assert_two_nodes_agree(state, output, nodes=2, per_node=2, threads=1):
    assert state == "COMPLETED", output[-4000:]
    ranks = RANK_LINE.findall(output)
    print("\n".join(line for line in output.splitlines() if line.startswith("ddp rank=")))   # shown by pytest -rP
    assert sorted(int(r[0]) for r in ranks) == list(range(nodes * per_node)), output[-4000:]
    assert {r[1] for r in ranks} == {str(nodes * per_node)}
    assert {r[4] for r in ranks} == {"gloo"}
    assert {r[5] for r in ranks} == {str(threads)}, ranks
    losses = {r[6] for r in ranks}
    assert len(losses) == 1 and float(losses.pop()) > 0, ranks
    on = {}
    for rank, _world, local, node, _backend, _threads, _loss in ranks:
        on.setdefault(node, set()).add(int(local))
    assert len(on) == nodes, on
    assert all(local == set(range(per_node)) for local in on.values()), on


@pytest.mark.parametrize("engine", ["charliecloud", "podman"])
def test_ddp_job_in_modaks_image_runs_on_two_nodes_with_one_loss(cluster, ddp_image, registry, engine):
    directory = os.path.join(cluster.workdir, "ddp-" + engine)
    os.makedirs(directory)
    script = write_job(directory, ddp_image["catalog"], {
        "job.target.image_dir": os.path.join(cluster.workdir, "images"), "job.target.container_engine": engine,
        "job.job_options.partition": cluster.partition,
        # Charliecloud: the job pulls the image itself (an explicit choice; the default stages it before submitting)
        "job.target.image_fetch": "job" if engine == "charliecloud" else "staged"})
    text = open(script).read()
    ref = "%s/modak/pytorch:2.13.0-cpu" % registry["host"]
    assert "# generated by sodalite.modak; image: docker://%s\n" % ref in text
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n" in text
    assert "\nsrun --nodes=2 --ntasks=4 --ntasks-per-node=2 bash -c " in text
    if engine == "charliecloud":
        assert "ch-image pull %s" % ref in text   # the job pulls the image itself, once
    else:
        # podman run would pull it in each of the four ranks at once: the node has it already, as sites cache
        # images; the ranks get the rendezvous variables by name
        assert "--env MASTER_ADDR --env MASTER_PORT --env RANK --env LOCAL_RANK --env WORLD_SIZE" in text
        _run(["podman", "pull", "--quiet", "--cert-dir", os.path.dirname(registry["ca"]), ref])
    state, output = submit_and_wait(cluster, script, env=dict(ddp_image["env"], SLURM_CONF=cluster.conf))
    assert_two_nodes_agree(state, output)
    record = [line for line in output.splitlines() if line.startswith("{")]
    assert len(record) == 1 and '"torch": "2.13.0+cpu"' in record[0]   # rank 0 alone writes it, from the image


def torch_python(accelerate=False, lightning=False, deepspeed=False):
    """A Python with torch 2.13.0 on the host (bare runs); with ``accelerate``, Hugging Face Accelerate too (both
    pinned in benchmarks/requirements-bench.txt); with ``lightning``, Lightning (LIGHTNING); with ``deepspeed``,
    DeepSpeed built from its source package against that torch (DEEPSPEED)."""
    python = os.environ.get("MODAK_TORCH_PYTHON") or os.path.join(TORCH_VENV, "bin", "python")
    if not os.path.exists(python):
        _run([sys.executable, "-m", "venv", TORCH_VENV])
        _run([python, "-m", "pip", "install", "--quiet", "torch==2.13.0"])
    if accelerate and subprocess.run([python, "-c", "import accelerate"], capture_output=True,
                                     check=False).returncode:
        _run([python, "-m", "pip", "install", "--quiet", "-r",
              os.path.join(ROOT, "benchmarks", "requirements-bench.txt")])
    if lightning and subprocess.run([python, "-c", "import lightning"], capture_output=True, check=False).returncode:
        _run([python, "-m", "pip", "install", "--quiet", LIGHTNING])
    if deepspeed and subprocess.run([python, "-c", "import deepspeed"], capture_output=True, check=False).returncode:
        _run([python, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-binary=deepspeed", DEEPSPEED],
             env=dict(os.environ, DS_BUILD_OPS="0"))
    return python


def test_bare_ddp_job_runs_on_two_nodes_with_one_loss(cluster):
    """No container (container_runtime ""), although modak's recipe image would fit the request; no threads in the
    DSL: each rank trains with the 2 CPUs its task has (core_count_per_process), as the rank itself reports. srun
    ends the step when a rank fails, as training scripts ask (launch_options)."""
    directory = os.path.join(cluster.workdir, "ddp-bare")
    os.makedirs(directory)
    script = write_job(directory, None, {"job.application.executable": "%s mnist_cnn.py" % torch_python(),
                                         "job.job_options.partition": cluster.partition,
                                         "job.job_options.core_count_per_process": 2,
                                         "job.application.container_runtime": "",
                                         "job.application.launch_options": ["--kill-on-bad-exit=1", "--wait=60"],
                                         "job.application.threads": None})
    text = open(script).read()
    assert "image: none (bare run)" in text and "ch-run" not in text
    assert "#SBATCH --cpus-per-task=2\n" in text and "export OMP_NUM_THREADS\n" in text
    assert "\nsrun --nodes=2 --ntasks=4 --ntasks-per-node=2 --cpus-per-task=2 --kill-on-bad-exit=1 --wait=60 " in text
    state, output = submit_and_wait(cluster, script)
    assert_two_nodes_agree(state, output, threads=2)


@pytest.mark.parametrize("launch,words", [
    ("torchrun", "-m torch.distributed.run --nnodes=\"$SLURM_NNODES\" --nproc-per-node=2 "),
    ("accelerate", "-m accelerate.commands.launch --multi_gpu --num_processes=4 --num_machines=2 "
                   "--rdzv_backend=static ")])
def test_bare_per_node_launchers_run_on_two_nodes_with_one_loss(cluster, launch, words):
    """One launcher per node (torchrun; Hugging Face Accelerate's accelerate launch), no container, in a venv: each
    node's launcher starts its 2 ranks, which meet on the first node (torchrun: c10d; accelerate: static, machine 0
    hosts the store); each rank's threads are its share of the node's CPUs (2 CPUs, 2 ranks: 1). Both test nodes
    resolve to this host, so with c10d either node's agent could host the store and Accelerate's port check on
    machine 0 then failed (CI, job 9): static makes the host the node that checked."""
    directory = os.path.join(cluster.workdir, "ddp-bare-" + launch)
    os.makedirs(directory)
    python = torch_python(accelerate=launch == "accelerate")
    script = write_job(directory, None, {"job.application.executable": "%s mnist_cnn.py" % python,
                                         "job.job_options.partition": cluster.partition,
                                         "job.application.container_runtime": "",
                                         "job.application.threads": None,
                                         "job.optimisation.app_type-ai_training.config.distributed_launch": launch})
    text = open(script).read()
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n" in text
    assert "\nsrun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=2 " in text
    assert " %s %s" % (python, words) in text
    state, output = submit_and_wait(cluster, script)
    assert_two_nodes_agree(state, output)


@pytest.mark.parametrize("launch,words", [
    ("torchrun", "python3 -m torch.distributed.run --nnodes=\"$SLURM_NNODES\" --nproc-per-node=2 "),
    ("accelerate", "python3 -m accelerate.commands.launch --multi_gpu --num_processes=4 --num_machines=2 ")])
def test_per_node_launchers_in_modaks_image_run_on_two_nodes_with_one_loss(
        cluster, ddp_image, registry, launch, words):
    """torchrun and accelerate launch, one per node, inside modak's image (Charliecloud), which carries Accelerate
    because the DSL asks for it (opt_build.python_packages): the catalog's image fits, and no other would."""
    directory = os.path.join(cluster.workdir, "ddp-image-" + launch)
    os.makedirs(directory)
    script = write_job(directory, ddp_image["catalog"], {
        "job.target.image_dir": os.path.join(cluster.workdir, "images"), "job.target.image_fetch": "job",
        "job.job_options.partition": cluster.partition, "job.application.threads": None,
        "job.optimisation.opt_build.python_packages": [ACCELERATE],
        "job.optimisation.app_type-ai_training.config.distributed_launch": launch})
    text = open(script).read()
    assert "# generated by sodalite.modak; image: docker://%s/modak/pytorch:2.13.0-cpu\n" % registry["host"] in text
    assert " -- %s" % words in text
    state, output = submit_and_wait(cluster, script, env=dict(ddp_image["env"], SLURM_CONF=cluster.conf))
    assert_two_nodes_agree(state, output)


def test_lightning_srun_per_rank_runs_on_two_nodes_with_one_loss(cluster):
    """launcher: lightning, as Lightning's Slurm guide writes it (--ntasks-per-node = devices, srun python
    train.py), no container: each rank is one srun task, and Lightning reads its rank, world and node from Slurm
    (SLURMEnvironment) and the rendezvous from modak's MASTER_ADDR and MASTER_PORT."""
    directory = os.path.join(cluster.workdir, "ddp-lightning")
    os.makedirs(directory)
    python = torch_python(lightning=True)
    shutil.copy(LIGHTNING_PROGRAM, directory)
    script = write_job(directory, None, {"job.application.executable": "%s lightning_train.py" % python,
                                         "job.application.arguments": ["2", "2"],
                                         "job.job_options.partition": cluster.partition,
                                         "job.application.container_runtime": "",
                                         "job.application.threads": None,
                                         "job.application.launcher": "lightning"})
    text = open(script).read()
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n" in text
    assert text.rstrip().endswith("\nsrun --nodes=2 --ntasks=4 --ntasks-per-node=2 %s lightning_train.py 2 2" % python)
    state, output = submit_and_wait(cluster, script)
    assert_two_nodes_agree(state, output)
    assert sorted(re.findall(r"lightning environment=SLURMEnvironment rank=(\d)", output)) == \
        ["0", "1", "2", "3"], output[-3000:]


def test_deepspeed_per_node_runs_on_two_nodes_with_one_loss(cluster):
    """launcher: deepspeed, no container, in a venv: one DeepSpeed launcher per node (deepspeed --no_ssh, its node's
    index read in its srun task) over a host file of the allocation; each starts its 2 ranks, which meet on the
    first node; DeepSpeed passes --local_rank and the program trains through deepspeed.initialize."""
    directory = os.path.join(cluster.workdir, "ddp-deepspeed")
    os.makedirs(directory)
    python = torch_python(deepspeed=True)
    shutil.copy(DEEPSPEED_PROGRAM, directory)
    script = write_job(directory, None, {"job.application.executable": "%s deepspeed_train.py" % python,
                                         "job.application.arguments": None,
                                         "job.job_options.partition": cluster.partition,
                                         "job.application.container_runtime": "",
                                         "job.application.threads": None,
                                         "job.application.launcher": "deepspeed"})
    text = open(script).read()
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n" in text
    assert "\nsrun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=2 bash -c " in text
    assert " %s -m deepspeed.launcher.runner --no_ssh --hostfile=" % python in text
    state, output = submit_and_wait(cluster, script)
    assert_two_nodes_agree(state, output)
    # the host file (a node and its slots per line) made the four ranks on two nodes above; the script's EXIT
    # trap removed it when the job ended
    assert [name for name in os.listdir(directory) if name.startswith("deepspeed-hosts.")] == []
