"""Launch scripts that AI-training projects publish (tests/data/training), fact by fact against modak's script.

Imported by tests as ``training``. A script's facts are of two kinds:

- the allocation (nodes, tasks, tasks per node, CPUs per task, GPUs, memory, time, partition, account, QOS), read
  from the directive lines with ``centres.facts`` plus the account and QOS;
- the launch (launcher, processes per node, world size, rendezvous host, container and image, threads per rank,
  fabric variables): written by hand in the manifest for the published script (``launch:``), and read from
  modak's script by ``modak_launch``, which knows the few forms modak writes (tests/unit/test_launcher_field.py,
  test_distributed.py and test_pyxis.py show them).

``compare`` lists the facts where the two differ, ``figures`` sums them per project.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import shlex

import yaml

import centres
from helpers import ROOT

FOLDER = os.path.join(ROOT, "tests", "data", "training")
with open(os.path.join(FOLDER, "manifest.yaml")) as _stream:
    MANIFEST = yaml.safe_load(_stream)
SCRIPTS = MANIFEST["scripts"]
EXTENSIONS = {"slurm": ".sbatch", "pbspro": ".pbs"}
# the variables that tune the interconnect and the collectives: NCCL (RCCL reads the same), libfabric, UCX, CUDA's
# connection count that Megatron-LM asks for, PyTorch's NCCL switches
FABRIC = re.compile(r"^(NCCL_|RCCL_|FI_|UCX_|TORCH_NCCL_|CUDA_DEVICE_MAX_CONNECTIONS$)")
# modak's srun launch sets the ranks' variables in a wrapper; its lightning launch starts the program as it is
RANK_WRAPPER = "export RANK="
RANK_CPUS = "the rank's CPUs"
FIRST_NODE = "first node"
STANDALONE = "standalone"


def scheduler_of(entry):
    return entry.get("scheduler", "slurm")


def source_url(entry):
    """Where the project publishes the script: the file at the commit read."""
    return "https://github.com/%(repo)s/blob/%(commit)s/%(path)s" % MANIFEST["sources"][entry["source"]]


def path(entry):
    return os.path.join(FOLDER, entry["name"] + EXTENSIONS[scheduler_of(entry)])


def published(entry):
    """The script as published: the stored file with its '#!' line put back (the collection's sanity test allows
    only a few '#!' lines, so the stored file starts at the second line)."""
    with open(path(entry)) as handle:
        return entry["shebang"] + "\n" + handle.read()


def git_blob(text):
    """Git's object id of a file with this text: the manifest's ``blob`` proves the file is the one published."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # nosec - git's id, not a secret


def document(entry):
    """The DSL document of a manifest entry, for its scheduler."""
    job = copy.deepcopy(entry["dsl"])
    job.setdefault("target", {})["job_scheduler_type"] = scheduler_of(entry)
    return {"job": job}


# --- the allocation ------------------------------------------------------------------------------------------------

def _slurm_extras(text):
    """What centres.facts leaves out of #SBATCH lines: account, QOS, GPUs per task, the --tasks-per-node spelling
    and a bare --time (minutes in sbatch)."""
    found = {}
    short = {"A": "account", "q": "qos", "t": "time"}
    for name, value in centres.options(centres.directive_words(text, "#SBATCH")):
        name = short.get(name, name)
        if name in ("account", "qos"):
            found[name] = value
        elif name == "gpus-per-task":
            found["gpus_per_task"] = int(value)
        elif name == "tasks-per-node":
            found["tasks_per_node"] = int(value)
        elif name == "time" and re.match(r"^\d+$", value):
            found["time_s"] = int(value) * 60
    return found


def _pbspro_extras(text):
    """The account of a #PBS script: -A, or -P where a site names its group so (ABCI)."""
    return dict(("account", value) for name, value in centres.options(centres.directive_words(text, "#PBS"))
                if name in ("A", "P"))


EXTRAS = {"slurm": _slurm_extras, "pbspro": _pbspro_extras}


def allocation(scheduler, text):
    found = centres.facts(scheduler, text)
    found.update(EXTRAS[scheduler](text))
    if found.get("cpus_per_task") == 0:      # a PBS chunk with mpiprocs and no ncpus states no CPUs per task
        del found["cpus_per_task"]
    return found


# --- the launch in modak's script ------------------------------------------------------------------------------

def _launch_line(text):
    """The line that starts the ranks: the last line that runs srun, mpiexec, mpirun or a program (modak writes the
    launch last, before the post-execution lines)."""
    lines = [line for line in text.splitlines() if line and not line.startswith(("#", " ", "export ", "fi", "if "))
             and "=" not in line.split(" ", 1)[0]]
    starters = ("srun ", "mpiexec ", "mpirun ", "python", "deepspeed ", "torchrun ", "accelerate ")
    return [line for line in lines if line.startswith(starters)][-1]


def _option(words, *names):
    for index, word in enumerate(words):
        for name in names:
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
            if word == name and index + 1 < len(words):
                return words[index + 1]
    return None


def _number(value):
    return int(value) if value is not None and re.match(r"^\d+$", value) else value


def _launcher(words, nodes):
    """(launcher, processes per node, world size) of modak's launch words."""
    if "torch.distributed.run" in words or "torchrun" in words:
        per_node = _number(_option(words, "--nproc-per-node", "--nproc_per_node"))
        return "torchrun", per_node, per_node * nodes if isinstance(per_node, int) else None
    if "accelerate.commands.launch" in words:
        world = _number(_option(words, "--num_processes"))
        machines = _number(_option(words, "--num_machines")) or 1
        return "accelerate", world // machines, world
    if words[0] == "deepspeed":
        per_node = _number(_option(words, "--num_gpus"))
        return "deepspeed", per_node, per_node * nodes if isinstance(per_node, int) else None
    if words[0] in ("mpiexec", "mpirun"):
        world = _number(_option(words, "-n", "-np"))
        per_node = _number(_option(words, "--ppn", "-ppn", "--npernode"))
        return words[0], per_node or (world // nodes if world else None), world
    if words[0] == "srun":
        per_node = _number(_option(words, "--ntasks-per-node"))
        world = _number(_option(words, "--ntasks"))
        return ("srun" if RANK_WRAPPER in " ".join(words) else "lightning"), per_node, world
    return "python", 1, 1


def _container(words, text):
    """(container, image) of modak's launch: pyxis's --container-image, an apptainer/singularity exec, or none."""
    header = re.search(r"^# generated by sodalite\.modak; image: (.*)$", text, re.M)
    image = header.group(1) if header and not header.group(1).startswith("none") else None
    if any(word.startswith("--container-image") for word in words):
        return "pyxis", image
    for runtime in ("apptainer", "singularity"):
        if runtime in words:
            return runtime, image
    return "none", None


def _threads(text):
    match = re.search(r"^(?:export )?OMP_NUM_THREADS=(.+)$", text, re.M)
    if not match:
        return None
    value = match.group(1).strip('"')
    return int(value) if value.isdigit() else RANK_CPUS


def _fabric(text):
    found = {}
    for line in text.splitlines():
        match = re.match(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if match and FABRIC.match(match.group(1)):
            found["env " + match.group(1)] = shlex.split(match.group(2))[0] if match.group(2) else ""
    return found


def modak_launch(text, nodes):
    """The launch facts of modak's script for an allocation of ``nodes`` nodes."""
    words = shlex.split(_launch_line(text))
    launcher, per_node, world = _launcher(words, nodes)
    container, image = _container(words, text)
    found = {"launcher": launcher, "processes_per_node": per_node, "world_size": world, "container": container,
             "image": image, "threads": _threads(text)}
    if "--standalone" in words:
        found["rendezvous"] = STANDALONE
    elif ('MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)"' in text
          or 'MASTER_ADDR="$(head -n 1 "$PBS_NODEFILE")"' in text):
        found["rendezvous"] = FIRST_NODE
    found.update(_fabric(text))
    return dict((k, v) for k, v in found.items() if v is not None)


# --- both scripts --------------------------------------------------------------------------------------------------

def _image_path(value):
    """An image as the job reads it: '$(pwd)/x.sqsh', '$PWD/x.sqsh' and 'x.sqsh' name the same file (the batch
    script runs in the submit directory)."""
    return re.sub(r"^(\$\(pwd\)|\$PWD|\$\{PWD\})/", "", value) if isinstance(value, str) else value


def _flat(launch):
    out = dict((k, v) for k, v in launch.items() if k != "fabric")
    out.update(("env " + name, str(value)) for name, value in launch.get("fabric", {}).items())
    if "image" in out:
        out["image"] = _image_path(out["image"])
    return out


def _one_host(found):
    """The rendezvous is a host: on one node, torchrun --standalone's local host is the allocation's first node."""
    if found.get("nodes", 1) == 1 and found.get("rendezvous") == STANDALONE:
        found["rendezvous"] = FIRST_NODE
    return found


def theirs(entry):
    """The published script's facts: its allocation (read) and its launch (the manifest's)."""
    found = allocation(scheduler_of(entry), published(entry))
    found.update(_flat(entry["launch"]))
    return _one_host(found)


def mine(entry, text):
    """modak's script's facts: its allocation and its launch, both read from the script; none where modak refused
    the document (``text`` None: a DSL feature the entry ``needs`` is missing, so every fact is a miss)."""
    if text is None:
        return {}
    found = allocation(scheduler_of(entry), text)
    found.update(_flat(modak_launch(text, found.get("nodes", 1))))
    return _one_host(found)


def compare(published_facts, modak_facts):
    """{fact: (published, modak's)} for every fact where the two differ (a fact only one states differs)."""
    return dict((key, (published_facts.get(key), modak_facts.get(key)))
                for key in sorted(set(published_facts) | set(modak_facts))
                if published_facts.get(key) != modak_facts.get(key))


LAUNCH_FACTS = ("launcher", "processes_per_node", "world_size", "rendezvous", "container", "image", "threads")


def is_launch_fact(key):
    return key in LAUNCH_FACTS or key.startswith("env ")


def figures(render):
    """Per project (scripts, facts compared, facts matched, scripts matching every launch fact, scripts matching every
    launch fact but the threads) and the total, for
    ``render(entry) -> modak's script text`` (None where modak refuses the document)."""
    rows = {}
    for entry in SCRIPTS:
        ours, modak = theirs(entry), mine(entry, render(entry))
        keys = set(ours) | set(modak)
        matched = len([k for k in keys if ours.get(k) == modak.get(k)])
        launch_differs = [k for k in compare(ours, modak) if is_launch_fact(k)]
        launch_ok = bool(modak) and not launch_differs
        but_threads = bool(modak) and not [k for k in launch_differs if k != "threads"]
        row = rows.setdefault(entry["project"], [0, 0, 0, 0, 0])
        for index, value in enumerate((1, len(keys), matched, int(launch_ok), int(but_threads))):
            row[index] += value
    table = [(project,) + tuple(counts) for project, counts in rows.items()]
    total = ("total",) + tuple(sum(row[i] for row in table) for i in range(1, 6))
    return table, total
