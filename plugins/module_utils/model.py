# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed data of the pipeline: the request (from the DSL), images, settings, scripts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

SECRET_SHOWN = "********"   # what results and reports show for a secret value (Ansible's own mask)


class Secret(str):
    """A secret value (application.secrets' ``value``): written into the private job script only, never returned,
    reported or shown."""


@dataclass(frozen=True)
class JobOptions:
    job_name: str = "job"
    queue: Optional[str] = None
    constraint: Optional[str] = None
    walltime_s: Optional[int] = None
    nodes: Optional[int] = None
    tasks_per_node: Optional[int] = None
    tasks: Optional[int] = None
    cpus_per_task: Optional[int] = None
    gpus_per_node: Optional[int] = None
    gpu_type: Optional[str] = None
    mem_mb: Optional[int] = None
    mem_per_cpu_mb: Optional[int] = None
    account: Optional[str] = None
    qos: Optional[str] = None
    array: Optional[str] = None
    dependency: Tuple[str, ...] = ()
    begin: Optional[str] = None
    exclusive: bool = False
    stdout: Optional[str] = None  # None: the scheduler's own default name (unique per job)
    stderr: Optional[str] = None
    mail_events: Tuple[str, ...] = ()  # canonical: begin, end, fail
    mail_user: Optional[str] = None
    export_all: bool = False
    export_vars: Optional[str] = None
    nodelist: Optional[str] = None
    extra_directives: Tuple[str, ...] = ()
    placement: Optional[str] = None           # PBS Pro place=: pack | scatter | free
    mem_per_gpu_mb: Optional[int] = None
    mem_whole_node: bool = False              # Slurm --mem=0
    scratch_mb: Optional[int] = None          # node-local scratch per node
    scratch_resource: Optional[str] = None    # the site's resource name for it (PBS Pro, Grid Engine)
    gpu_resource: Optional[str] = None        # the site's GPU resource (Grid Engine)
    gpu_type_resource: Optional[str] = None   # the site's GPU model resource (PBS Pro)
    parallel_environment: Optional[str] = None  # Grid Engine -pe NAME


@dataclass(frozen=True)
class Build:
    src: str
    command: str
    parallelism: int = 1


@dataclass(frozen=True)
class Application:
    app_tag: Optional[str] = None
    app_type: Optional[str] = None
    argv: Tuple[str, ...] = ()
    container_runtime: Optional[str] = None
    mpi_ranks: int = 1
    threads: int = 1
    threads_given: bool = True   # False: no threads in the DSL; each rank gets its CPUs at run time
    threads_unset: bool = False  # threads: unset: no OMP_NUM_THREADS, as the launcher and the framework leave it
    minimal_efficiency: Optional[float] = None
    build: Optional[Build] = None
    environment: Tuple[Tuple[str, str], ...] = ()
    secrets: Tuple[Tuple[str, str, str], ...] = ()   # (name, env|file|value, the variable, path or value)
    working_directory: Optional[str] = None
    bind_paths: Tuple[str, ...] = ()
    launch_options: Tuple[str, ...] = ()   # srun options of the launch (allow-listed), cpu and GPU binding included
    modules: Tuple[str, ...] = ()
    launcher: str = "auto"
    mpi_library: Optional[str] = None  # the MPI library of a bare run (the image's otherwise)
    pre_execution: Tuple[str, ...] = ()   # user shell, run as given before the build and the run
    post_execution: Tuple[str, ...] = ()  # user shell, run as given after the run


@dataclass(frozen=True)
class Target:
    scheduler: str = "local"
    name: Optional[str] = None
    engine: str = "apptainer"
    image_dir: Optional[str] = None
    image_fetch: str = "staged"    # staged: the job checks the image is there; job: the job pulls it
    login_host: Optional[str] = None
    work_dir: Optional[str] = None
    partition: Optional[str] = None
    modules: Tuple[str, ...] = ()  # environment modules every job on this target loads
    setup: Tuple[str, ...] = ()    # user shell every job on this target runs first, as given
    mpi_type: Optional[str] = None  # the site's srun --mpi= plugin; 'none': the site's MpiDefault decides


@dataclass(frozen=True)
class Distributed:
    """Data-parallel training as the DSL asks for it (app_type-ai_training.config)."""
    processes_per_node: Optional[int] = None  # None: request_gpus on GPU targets, else 1
    backend: str = "auto"                     # auto | gloo | nccl
    launch: str = "auto"                      # auto | srun | torchrun | accelerate


@dataclass(frozen=True)
class Optimisation:
    app_type: str
    enable_opt_build: bool = True
    opt_build_asked: bool = False  # the DSL itself says enable_opt_build: true (not only the section's default)
    enable_autotuning: bool = False
    cpu_type: str = "x86"
    accelerator: str = "none"
    cpu_isa: Optional[str] = None
    cpu_microarch: Optional[str] = None
    cpu_features: Tuple[str, ...] = ()
    cuda_version: Optional[str] = None
    rocm_version: Optional[str] = None
    python_packages: Tuple[str, ...] = ()  # opt_build.python_packages: pinned, beside the framework
    framework: Optional[str] = None
    version: Optional[str] = None
    compilers: Tuple[str, ...] = ()  # requested graph compilers: xla, inductor, glow, ngraph
    parallelisation: Optional[str] = None
    mpi_library: Optional[str] = None
    omp_affinity: Optional[str] = None
    data_location: Optional[str] = None
    tuning: Tuple[Tuple[str, Tuple[object, ...]], ...] = ()  # knob -> values the performance model may pick
    distributed: Optional[Distributed] = None  # data-parallel training (distributed_training: true)
    model_kind: Optional[str] = None  # app_type-ai_*.config.type: cnn, rnn, transformer, ...


@dataclass(frozen=True)
class Resilience:
    """job.resilience with its defaults: how a long training survives its limit, a preemption, a lost node."""
    signal: Optional[str] = None             # the program's; None: TERM under a per-node launcher, else USR1
    lead_s: Optional[int] = None             # the signal's lead time before the limit (None: the scheduler has none)
    requeue_on: Tuple[str, ...] = ()         # time_limit | preemption | node_failure
    max_restarts: int = 3
    checkpoint_dir: str = "checkpoints"      # absolute, or relative to the working directory
    total_s: Optional[int] = None            # the whole training's time, over several jobs


@dataclass(frozen=True)
class Candidate:
    """A partition job.placement may choose, and the hardware class whose recorded runs predict the run time there
    (None: the runs recorded on the partition)."""
    partition: str
    hw_class: Optional[str] = None


@dataclass(frozen=True)
class JobRequest:
    """The validated DSL, with defaults applied; what the pipeline works on."""
    options: JobOptions
    app: Application
    target: Target
    opt: Optional[Optimisation] = None
    resilience: Optional[Resilience] = None  # job.resilience: checkpoint, signal, requeue
    placement: Tuple[Candidate, ...] = ()   # job.placement: the partitions to choose from (none: no choice)
    notes: Tuple[str, ...] = ()  # things said about defaults that were applied
    warnings: Tuple[str, ...] = ()  # readings of the document that may not be what was meant


@dataclass(frozen=True)
class RecipeSpec:
    """What an optimised image is built from: the part of a request a recipe reads (recipe/spec.py derives the
    recipe). A DSL's optimisation section gives one (recipe.spec.spec_of); a catalog entry's ``recipe`` is one."""
    framework: Optional[str] = None
    version: Optional[str] = None
    cpu_type: str = "x86"
    cpu_isa: Optional[str] = None
    cpu_microarch: Optional[str] = None
    cpu_features: Tuple[str, ...] = ()
    accelerator: str = "none"
    cuda_version: Optional[str] = None
    rocm_version: Optional[str] = None
    python_packages: Tuple[str, ...] = ()  # opt_build.python_packages: pinned, beside the framework
    compilers: Tuple[str, ...] = ()
    parallelisation: Optional[str] = None
    mpi_library: Optional[str] = None
    omp_affinity: Optional[str] = None
    enable_opt_build: bool = True
    app: Optional[str] = None

    def as_dict(self):
        """The fields that differ from the defaults (the catalog's ``recipe`` form), lists for tuples."""
        out = {}
        for name, default in _SPEC_DEFAULTS.items():
            value = getattr(self, name)
            if value != default:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data):
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


_SPEC_DEFAULTS = {name: getattr(RecipeSpec, name) for name in RecipeSpec.__dataclass_fields__}
BUILD_RANK = {"official": 0, "optimised-pip": 1, "optimised-source": 2}


@dataclass(frozen=True)
class Image:
    """One catalog entry."""
    name: str
    uri: str
    framework: str
    version: Tuple[int, ...]
    kind: str = "framework"  # framework | mpi | application
    build: str = "official"  # official | optimised-pip | optimised-source
    arch: str = "x86_64"
    isa: str = "x86-64"
    cpu_features: Tuple[str, ...] = ()
    accelerator: str = "none"  # none | nvidia | amd
    cuda: Optional[str] = None
    rocm: Optional[str] = None
    compilers: Tuple[str, ...] = ()
    math: Tuple[str, ...] = ()
    mpi: Optional[str] = None
    mpi_version: Optional[str] = None
    mpi_pmi: Optional[str] = None  # the PMI its MPI speaks under srun (pmix, pmi2), when the entry says
    app: Optional[str] = None
    scaling: Tuple[Tuple[str, object], ...] = ()
    labels: Tuple[Tuple[str, str], ...] = ()
    recipe: Optional[RecipeSpec] = None  # recipe-backed: what the image is built from
    python_packages: Tuple[str, ...] = ()  # pinned Python packages beside the framework

    @property
    def version_text(self):
        return ".".join(str(p) for p in self.version)

    def as_dict(self):
        return {
            "name": self.name, "uri": self.uri, "framework": self.framework,
            "version": self.version_text, "kind": self.kind, "build": self.build,
            "arch": self.arch, "isa": self.isa, "cpu_features": list(self.cpu_features),
            "accelerator": self.accelerator, "cuda": self.cuda, "rocm": self.rocm,
            "compilers": list(self.compilers), "features": sorted(set(self.compilers) | set(self.math)),
            "math": list(self.math), "mpi": self.mpi, "mpi_version": self.mpi_version, "mpi_pmi": self.mpi_pmi,
            "app": self.app,
            "recipe": self.recipe.as_dict() if self.recipe else None,
        }


@dataclass(frozen=True)
class Choice:
    """Outcome of matching: the image (or None for a bare run) and why."""
    image: Optional[Image]
    uri: Optional[str]
    source: str  # catalog | user | official | recipe | bare
    explanation: Tuple[str, ...] = ()
    warnings: Tuple[str, ...] = ()
    runners_up: Tuple[str, ...] = ()
    rejected: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DistributedPlan:
    """How the ranks of a data-parallel training start (settings.plan -> distributed.plan)."""
    launch: str              # a launcher's name (launchers/registry.py), or standalone (torchrun --standalone)
    backend: str             # gloo | nccl
    nodes: int
    processes_per_node: int
    stepped: bool = True     # the launcher runs in the scheduler's tasks on every node (Scheduler.step_words, the
    #                          NODE_STEPS capability); False: one node, started by the script itself

    @property
    def world_size(self):
        return self.nodes * self.processes_per_node


@dataclass(frozen=True)
class Settings:
    """Run settings chosen by the model step."""
    nodes: int
    tasks_per_node: Optional[int]
    ranks: int
    threads: int
    launcher: str  # srun | mpirun | mpiexec | none
    env: Tuple[Tuple[str, str], ...]
    cpus_per_task: int = 1
    gpus: int = 0
    gpu_vendor: str = "none"
    engine: str = "apptainer"
    notes: Tuple[str, ...] = ()
    extra_args: Tuple[str, ...] = ()  # program arguments chosen by the performance model
    tasks: Optional[int] = None  # the job's total tasks (core_count, raised to the ranks the launcher starts)
    mpi_library: Optional[str] = None  # the MPI library the program uses (image, optimisation or application)
    pmi: Optional[str] = None  # srun's --mpi= plugin; None: no --mpi=, the site's MpiDefault decides
    launch_options: Tuple[str, ...] = ()  # srun options of the launch (application.launch_options, cpu/gpu_bind)
    warnings: Tuple[str, ...] = ()  # choices the request leaves to the site that may not be what was meant
    distributed: Optional[DistributedPlan] = None  # data-parallel training: its launch and ranks
    nodes_fixed: bool = True     # False: no node count was asked for; the scheduler spreads the tasks

    def as_dict(self):
        return {"nodes": self.nodes, "tasks_per_node": self.tasks_per_node, "ranks": self.ranks,
                "threads": self.threads, "cpus_per_task": self.cpus_per_task, "launcher": self.launcher,
                "env": {k: SECRET_SHOWN if isinstance(v, Secret) else v for k, v in self.env},
                "gpus": self.gpus, "gpu_vendor": self.gpu_vendor,
                "container_engine": self.engine, "args": list(self.extra_args), "tasks": self.tasks,
                "mpi_library": self.mpi_library, "pmi": self.pmi,
                "distributed": ({"launch": self.distributed.launch, "backend": self.distributed.backend,
                                 "nodes": self.distributed.nodes,
                                 "processes_per_node": self.distributed.processes_per_node,
                                 "world_size": self.distributed.world_size} if self.distributed else None),
                "nodes_fixed": self.nodes_fixed}


@dataclass(frozen=True)
class JobScript:
    """A rendered script: shebang, directive lines and body lines."""
    scheduler: str
    filename: str
    directives: Tuple[str, ...]
    body: Tuple[str, ...]
    shebang: str = "#!/bin/bash"

    @property
    def text(self):
        lines = [self.shebang]
        lines.extend(self.directives)
        lines.append("")
        lines.extend(self.body)
        return "\n".join(lines) + "\n"


@dataclass
class Result:
    """What one optimisation returns (the module's return values come from here)."""
    request: JobRequest
    choice: Choice
    settings: Settings
    script: JobScript
    explanation: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    extra: Dict[str, object] = field(default_factory=dict)
