# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Data-parallel training (PyTorch DDP): the DSL's rules, the plan of ranks and the rendezvous lines.

The launch is the launcher's (``application.launcher``, launchers/registry.py): ``srun`` (Slurm's default here,
one task per rank), ``torchrun`` or ``accelerate`` (one per node, starting the node's ranks), each in its own
file. Without Slurm one node runs ``torchrun --standalone`` (local, PBS, Grid Engine); more nodes there are
refused. The batch script exports MASTER_ADDR (the first host of the allocation) and MASTER_PORT (from the job
id); the program reads the usual variables (``init_process_group(init_method="env://")``) and the backend from
MODAK_DIST_BACKEND: gloo on CPUs, nccl on GPUs (ROCm builds of PyTorch name RCCL nccl too).
"""

from __future__ import annotations

import dataclasses
import re

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry as launchers
from ansible_collections.sodalite.modak.plugins.module_utils.model import DistributedPlan
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry as schedulers
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

CONFIG = "job.optimisation.app_type-ai_training.config"
OPTIONS = "job.job_options"
FIELDS = ("processes_per_node", "distributed_backend", "distributed_launch")
GPU_VENDORS = ("nvidia", "amd")
BACKEND_VAR = "MODAK_DIST_BACKEND"
# the rendezvous: the batch script sets these; each task gets RANK, LOCAL_RANK and WORLD_SIZE from its wrapper
HOST_VARS = ("MASTER_ADDR", "MASTER_PORT")
RANK_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE")
# what the launchers set for each rank or node (torchrun's too): never from application.environment
RENDEZVOUS_NAMES = HOST_VARS + RANK_VARS + ("LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK")
# a port per job (two jobs sharing a first node do not collide), in the range torchrun uses by default: the first
# free one from there on the first node, where the script runs and the rendezvous listens (another job sharing that
# node may hold the port: its number 1000 apart, or another cluster's job)
# the rendezvous port: the first one from 29500 + the job's number modulo 1000 that nothing listens on, on any of the
# node's addresses (ss(8); without it, a connection to 127.0.0.1: another user's listener on the node's own address
# kept the port, the store's bind failed and ranks reached her listener); none free up to 30999: the job stops
PORT_LINES = ("MASTER_PORT=$((29500 + {job} % 1000))",
              "modak_port_busy() {  # $1: a port; true when something listens on it on this node",
              "  if command -v ss >/dev/null; then [ -n \"$(ss -Hltn \"sport = :$1\" 2>/dev/null)\" ]",
              '  else (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; fi',
              "}",
              'while [ "$MASTER_PORT" -le 30999 ] && modak_port_busy "$MASTER_PORT"; do',
              "  MASTER_PORT=$((MASTER_PORT + 1))",
              "done",
              'if [ "$MASTER_PORT" -gt 30999 ]; then',
              '  echo "modak: every rendezvous port up to 30999 is in use on $(hostname): not run" >&2',
              "  exit 1",
              "fi",
              "export MASTER_PORT")
# job names in which Lightning ignores Slurm (its interactive mode; lightning/fabric/plugins/environments/slurm.py)
LIGHTNING_IGNORES = frozenset(("interactive", "bash"))
PYTHON = re.compile(r"^(.*/)?python[0-9.]*\Z")      # a program run by a Python: its launcher is that Python's
UNBUFFERED = "-u"    # the one interpreter flag DeepSpeed's and torch's runners give every rank themselves


def _scheduler(job):
    target = job.get("target") if isinstance(job.get("target"), dict) else {}
    name = target.get("job_scheduler_type") or target.get("queue_type") or schedulers.FALLBACK
    return schedulers.ALIASES.get(name, name)


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def gpus_per_node(acc_type, request_gpus):
    """GPUs per node as settings.plan counts them: request_gpus, else 1 on a GPU target, else none."""
    if request_gpus is not None:
        return request_gpus
    return 1 if acc_type in GPU_VENDORS else 0


def problems(doc):
    """What the DSL cannot mean for data-parallel training, each with its path."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    opt = job.get("optimisation") if isinstance(job.get("optimisation"), dict) else {}
    inference = opt.get("app_type-ai_inference")
    inference = inference.get("config") if isinstance(inference, dict) else None
    out = [DslProblem("job.optimisation.app_type-ai_inference.config.%s" % key, "applies only to training",
                      inference[key], "move it to app_type-ai_training, or remove it")
           for key in ("distributed_training",) + FIELDS
           if isinstance(inference, dict) and key in inference and inference[key] is not False]
    return out + _training_problems(job, opt)


def launcher_problems(doc):
    """application.launcher names a training launcher only for a distributed training, and a distributed training
    only a training launcher; the old field (distributed_launch) may not say otherwise."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    app = job.get("application") if isinstance(job.get("application"), dict) else {}
    launcher = app.get("launcher", "auto")
    if not isinstance(launcher, str) or launcher == "auto":
        return []
    opt = job.get("optimisation") if isinstance(job.get("optimisation"), dict) else {}
    section = opt.get("app_type-ai_training")
    config = section.get("config") if isinstance(section, dict) else {}
    config = config if isinstance(config, dict) else {}
    training = config.get("distributed_training") is True and opt.get("app_type") == "ai_training"
    where = "job.application.launcher"
    if training and launcher == "none":
        return [DslProblem(where, "a distributed training is started by its launcher; none starts no rank", launcher,
                           "choose %s, or auto" % ", ".join(launchers.TRAINING_NAMES))]
    if not training and launcher == "srun" and not schedulers.capable(_scheduler(job), schedulers.SRUN_STEPS):
        return [DslProblem(where, "srun needs Slurm; the scheduler is %s" % _scheduler(job), launcher,
                           "use auto (the scheduler's launcher), mpirun or mpiexec")]
    if training and not launchers.starts(launcher, launchers.TRAINING):
        return [DslProblem(where, "starts an MPI program's ranks, not a distributed training's", launcher,
                           "choose %s, or auto" % ", ".join(launchers.TRAINING_NAMES))]
    if not training and launcher in launchers.BY_NAME and not launchers.starts(launcher, launchers.MPI):
        return [DslProblem(where, "applies only to distributed training (it starts a training's ranks)", launcher,
                           "set app_type-ai_training.config.distributed_training: true, or choose srun, mpirun, "
                           "mpiexec or none")]
    old = config.get("distributed_launch")
    if training and old not in (None, "auto", launcher):
        return [DslProblem(CONFIG + ".distributed_launch", "is the old name of application.launcher, which says %s"
                           % launcher, old, "give only application.launcher")]
    return []


def interpreter_flags(argv):
    """The Python's own flags of a program it runs (``python3 -u -X dev train.py``: ``-u``, ``-X``): the words
    starting with '-' between the Python and its script or ``-m`` module (a flag's value ends them; the first flag
    but ``-u`` is refused anyway); none when no Python runs the program."""
    if not argv or not PYTHON.match(str(argv[0])):
        return []
    flags = []
    for word in argv[1:]:
        if not word.startswith("-") or word == "-" or word.startswith("-m"):
            break
        flags.append(word)
    return flags


def interpreter_problems(words, doc):
    """A launcher that starts every rank with its own Python (launchers.OWN_PYTHON: ``python -u`` and the script)
    passes on no flag of the program's Python: one before the script would reach the launcher's own options,
    which refuse it. ``-u`` is what every rank gets anyway; another is refused where it is written."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    app = job.get("application") if isinstance(job.get("application"), dict) else {}
    launcher = app.get("launcher")
    if launcher not in launchers.OWN_PYTHON:
        return []
    executable = list(words.get("executable") or [])
    argv = executable + list(words.get("arguments") or [])
    for index, flag in enumerate(interpreter_flags(argv), 1):
        if flag != UNBUFFERED:
            where = "job.application.%s" % ("executable" if index < len(executable) else "arguments")
            return [DslProblem(where, "%s is a flag of the Python, which %s does not pass on: it starts every rank "
                               "with its own (python -u and the script)" % (flag, launcher), flag,
                               "leave it out; set what it does through application.environment (PYTHONWARNINGS, "
                               "PYTHONDEVMODE, PYTHONOPTIMIZE...), which every rank inherits")]
    return []


def _training_problems(job, opt):
    section = opt.get("app_type-ai_training")
    config = section.get("config") if isinstance(section, dict) else None
    if not isinstance(config, dict):
        return []
    given = [key for key in FIELDS if key in config]
    if config.get("distributed_training") is not True:
        return [DslProblem("%s.%s" % (CONFIG, key), "applies only to distributed training", config[key],
                           "set distributed_training: true, or remove %s" % key) for key in given]
    if opt.get("app_type") != "ai_training":
        return []
    out = []
    options = job.get("job_options") if isinstance(job.get("job_options"), dict) else {}
    app = job.get("application") if isinstance(job.get("application"), dict) else {}
    build = opt.get("opt_build") if isinstance(opt.get("opt_build"), dict) else {}
    framework = config.get("ai_framework")
    if framework != "pytorch":
        out.append(DslProblem(CONFIG + ".distributed_training", "is written for PyTorch (DDP launched by srun or "
                              "torchrun); ai_framework is %r" % framework, True,
                              "choose ai_framework: pytorch, or start the processes yourself (remove "
                              "distributed_training)"))
    acc = build.get("acc_type") or "none"
    gpus = gpus_per_node(acc, _int(options.get("request_gpus")))
    ppn = _int(config.get("processes_per_node"))
    backend = config.get("distributed_backend", "auto")
    launch = app.get("launcher", "auto")
    where = "job.application.launcher"    # compat.py reads distributed_launch as it, and names it as written
    if launch == "auto" and "distributed_launch" in config:
        launch, where = config["distributed_launch"], CONFIG + ".distributed_launch"
    scheduler = _scheduler(job)
    nodes = _int(options.get("node_count")) or 1
    if backend == "nccl" and not gpus:
        out.append(DslProblem(CONFIG + ".distributed_backend", "nccl needs GPUs, and this job asks for none",
                              backend, "use gloo (or auto) on CPUs, or set opt_build.acc_type: nvidia"))
    if gpus and ppn is not None and ppn != gpus:
        out.append(DslProblem(CONFIG + ".processes_per_node", "must equal the GPUs per node (request_gpus %d): "
                              "one rank per GPU" % gpus, ppn,
                              "remove processes_per_node (it follows request_gpus) or make them equal"))
    ppn = ppn or gpus or 1
    steps = schedulers.capable(scheduler, schedulers.SRUN_STEPS)
    node_steps = schedulers.capable(scheduler, schedulers.NODE_STEPS)
    if launch in launchers.PER_RANK and not steps:
        out.append(DslProblem(where, "%s needs Slurm (one srun task per rank); the scheduler is %s"
                              % (launch, scheduler), launch, "use auto, or a launcher per node: %s"
                              % ", ".join(launchers.PER_NODE)))
    if launch == "lightning" and str(options.get("job_name")) in LIGHTNING_IGNORES:
        out.append(DslProblem(OPTIONS + ".job_name", "makes Lightning ignore Slurm (its interactive mode): every rank "
                              "would train alone", options["job_name"], "choose another job name"))
    if nodes > 1 and not node_steps:
        out.append(DslProblem(OPTIONS + ".node_count", "distributed training across %d nodes needs a scheduler that "
                              "starts a process on each node (Slurm's srun, PBS Pro's mpiexec); %s starts none on the "
                              "other nodes" % (nodes, scheduler),
                              nodes, "use job_scheduler_type: slurm or pbspro, or one node"))
    if nodes > 1 and node_steps and not steps and options.get("placement") not in (None, "scatter"):
        out.append(DslProblem(OPTIONS + ".placement", "a training across nodes starts one process per node (mpiexec "
                              "--ppn 1), so each chunk needs a node of its own", options["placement"],
                              "use scatter, or leave placement out (scatter is written)"))
    per_task = 1 if launch in launchers.PER_NODE or not steps else ppn
    if "process_count_per_node" in options and _int(options["process_count_per_node"]) != per_task:
        out.append(DslProblem(OPTIONS + ".process_count_per_node", "disagrees with distributed training, which "
                              "starts %d task(s) per node" % per_task, options["process_count_per_node"],
                              "remove it: processes_per_node (or request_gpus) sets the ranks per node"))
    if "core_count" in options and _int(options["core_count"]) != nodes * per_task:
        out.append(DslProblem(OPTIONS + ".core_count", "disagrees with distributed training, which starts %d "
                              "task(s) (%d node(s) x %d)" % (nodes * per_task, nodes, per_task),
                              options["core_count"], "remove it: node_count and processes_per_node set the ranks"))
    if "mpi_ranks" in app and _int(app["mpi_ranks"]) != nodes * ppn:
        out.append(DslProblem("job.application.mpi_ranks", "disagrees with distributed training: %d node(s) x %d "
                              "process(es) make %d ranks" % (nodes, ppn, nodes * ppn), app["mpi_ranks"],
                              "remove it, or make it node_count x processes_per_node"))
    for field in ("environment", "environment_expanded", "secrets"):
        environment = app.get(field) if isinstance(app.get(field), dict) else {}
        for name in sorted(set(environment) & set(RENDEZVOUS_NAMES)):
            out.append(DslProblem("job.application.%s.%s" % (field, name), "is set by the launch for each rank of "
                                  "a distributed training; a value of the job's would give every rank the same one",
                                  None if field == "secrets" else environment[name],
                                  "remove it: the launch sets it (MASTER_PORT follows the job id)"))
    return out


def backend_of(wanted, gpu_vendor):
    if wanted != "auto":
        return wanted
    return "nccl" if gpu_vendor in GPU_VENDORS else "gloo"


def plan(req, settings):
    """The settings of a data-parallel training: ranks = nodes x processes per node, and what to allocate.

    srun: one task per rank (--ntasks-per-node = processes per node). torchrun and standalone: one task per
    node holding every rank's CPUs (--cpus-per-task = processes x threads).
    """
    wanted = req.opt.distributed
    nodes = req.options.nodes or 1
    ppn = wanted.processes_per_node or settings.gpus or 1
    launch = wanted.launch
    steps = schedulers.capable(req.target.scheduler, schedulers.SRUN_STEPS)
    # the scheduler starts a per-node launcher on every node: Slurm always, PBS Pro's mpiexec across nodes (on one
    # node the script starts it)
    stepped = steps or (nodes > 1 and schedulers.capable(req.target.scheduler, schedulers.NODE_STEPS))
    if launch == "auto":
        launch = "srun" if steps else "torchrun" if stepped else "standalone"
    if launch == "torchrun" and not stepped:
        launch = "standalone"
    dist = DistributedPlan(launch=launch, backend=backend_of(wanted.backend, settings.gpu_vendor), nodes=nodes,
                           processes_per_node=ppn, stepped=stepped)
    threads = settings.threads
    env = tuple((k, v) for k, v in settings.env if k != BACKEND_VAR) + ((BACKEND_VAR, dist.backend),)
    # threads the DSL leaves open: the CPUs of each rank at run time, ppn ranks on a node (one task each with srun)
    per_rank = launch in launchers.PER_RANK
    cpus = schedulers.scheduler_class(req.target.scheduler).rank_cpus(ppn, dist.world_size, per_rank)
    env = tuple((k, cpus if k == "OMP_NUM_THREADS" and isinstance(v, Raw) else v) for k, v in env)
    notes = list(settings.notes) + ["distributed training: %d node(s) x %d rank(s) = %d, %s, backend %s"
                                    % (nodes, ppn, dist.world_size, _describe(launch), dist.backend)]
    common = dict(nodes=nodes, nodes_fixed=True, tasks=None, env=env, notes=tuple(notes), distributed=dist,
                  pmi=None)   # no MPI: srun starts the ranks without a PMI plugin
    if per_rank:
        return dataclasses.replace(settings, tasks_per_node=ppn, ranks=dist.world_size, launcher="srun",
                                   cpus_per_task=req.options.cpus_per_task or threads, **common)
    rank_cpus = req.options.cpus_per_task or threads
    return dataclasses.replace(settings, tasks_per_node=1, ranks=nodes, cpus_per_task=ppn * rank_cpus,
                               launcher="none", **common)


def _describe(launch):
    return {"srun": "one srun task per rank", "lightning": "one srun task per rank, read by Lightning",
            "torchrun": "one torchrun per node",
            "standalone": "torchrun --standalone on one node",
            "accelerate": "one accelerate launch per node",
            "deepspeed": "one deepspeed launcher per node"}[launch]


def setup_lines(dist, scheduler):
    """Lines of the batch script before the launch: the rendezvous address and port, read from the allocation by
    the scheduler's words (a launcher that sets no rendezvous of its own on one node needs none)."""
    if not dist.stepped:
        return launchers.get(dist.launch).single_node_lines(dist, scheduler) if dist.launch in launchers.BY_NAME \
            else []
    own = launchers.get(dist.launch).node_lines(dist, scheduler) if dist.launch in launchers.BY_NAME else []
    return ["# distributed training: rendezvous on the first node of the allocation",
            'MASTER_ADDR="%s"' % scheduler.first_node_expr, "export MASTER_ADDR"] + port_lines(scheduler) + own


def port_lines(scheduler):
    """MASTER_PORT from the job's number: the first free port from 29500 + the number modulo 1000."""
    job = scheduler.job_number_expr
    job = job[1:] if re.match(r"^\$[A-Za-z_][A-Za-z0-9_]*\Z", job) else job    # a variable's name in $(( ))
    return [line.format(job=job) if "{job}" in line else line for line in PORT_LINES]


def run_words(settings, argv, wrap, scheduler):
    """The launch line of the training: its launcher's (``wrap(argv, host_env)`` puts the program into the
    container, passing ``host_env``, variable names set on the host, through; ``scheduler`` the class whose
    tasks start it on each node)."""
    launch = settings.distributed.launch
    return launchers.get("torchrun" if launch == "standalone" else launch).training_words(settings, argv, wrap,
                                                                                          scheduler)
