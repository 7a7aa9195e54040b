# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optimisation DSL as a JSON Schema (draft 2020-12).

This module is the single source: ``schemas/modak-dsl.schema.json`` is exported from it
(``scripts/export_schema.py``) and a test keeps the two identical. Strings that reach a job
script either match a strict pattern here or are shell-quoted by the renderer.
"""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils import frameworks, image_refs, mpi
from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry as launchers
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtime_registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry as scheduler_registry

SCHEMA_ID = "https://sodalite.eu/modak/dsl.schema.json"

FRAMEWORKS = frameworks.names()
PARALLELISATIONS = ("mpi", "openmp", "openacc", "opencl", "opencc")
MPI_LIBRARIES = mpi.NAMES                           # from the MPI library table
MPI_TYPES = mpi.PMI_TYPES                           # Slurm's MPI plugins
SCHEDULERS = scheduler_registry.ALL_NAMES           # names and aliases, from the scheduler registry
APP_TYPES = ("mpi", "hpc", "python", "ai_training", "ai_inference")
OPT_APP_TYPES = ("ai_training", "ai_inference", "hpc")
CPU_TYPES = ("x86", "amd", "arm", "power")
ACC_TYPES = ("nvidia", "amd", "fpga", "none", "")
ISA_LEVELS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "armv8.0-a", "armv8.2-a",
              "armv9.0-a", "power9", "power10")
MICROARCHS = ("haswell", "broadwell", "skylake", "skylake_avx512", "cascadelake", "icelake",
              "sapphirerapids", "emeraldrapids", "graniterapids", "zen", "zen2", "zen3", "zen4",
              "zen5", "neoverse_n1", "neoverse_v1", "neoverse_v2", "a64fx", "power9", "power10")
LAUNCHERS = launchers.NAMES                         # from the launcher registry
ENGINES = tuple(runtime_registry.RUNTIMES)          # from the container runtime registry
DIST_BACKENDS = ("auto", "gloo", "nccl")
DIST_LAUNCHES = ("auto",) + launchers.TRAINING_NAMES          # the old field: the training launchers
IMAGE_FETCH = ("staged", "job")                      # who fetches a registry image (target.image_fetch)
STORAGE_CLASSES = ("default-common", "default-high", "default-ssd", "default-ultra_high")

# patterns: one line, no whitespace unless said otherwise
NAME = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"
# a pinned Python requirement: name[extras]==version (opt_build.python_packages, the catalog's python_packages)
PYTHON_PACKAGE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(\[[a-z0-9,_-]{1,100}\])?==[0-9][0-9A-Za-z.+!-]{0,49}$"
# an account may name its partition or cluster after '@' (project@partition, as some centres' guides write it)
ACCOUNT = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}(@[A-Za-z0-9][A-Za-z0-9_.+-]{0,63})?$"
JOB_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
WALLTIME = r"^(\d+-)?\d+(:\d{1,2}){0,2}$|^P(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?$"
MEMORY = r"^\d+(\.\d+)?\s?([KkMmGgTt]i?[Bb]?)?$"
ARRAY = r"^\d+(-\d+(:\d+)?)?(,\d+(-\d+(:\d+)?)?)*(%\d+)?$"
DEPENDENCY = r"^((after|afterok|afternotok|afterany|aftercorr|afterburstbuffer)(:\d+(_\d+)?(\+\d+)?)+|singleton)$"
DEFER = r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$"
# relative to the job's working directory: no leading '/', no '..' segment (a job must not write
# its output over files elsewhere, such as /etc/passwd when a local run executes as root)
OUTPUT_FILE = r"^(?!/)(?!(.*/)?\.\.(/|$))[A-Za-z0-9_.%@+/-]{1,255}$"
EMAIL = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(,[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})*$"
EVENTS = r"^[A-Za-z_]+(,[A-Za-z_]+)*$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
EXPORT_LIST = r"^(ALL|NONE|[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_./:@+-]*)?)(,[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_./:@+-]*)?)*$"
NODELIST = r"^[A-Za-z0-9_.,\[\]-]{1,1024}$"
CONSTRAINT = r"^[A-Za-z0-9_.&|,*\[\]():-]{1,256}$"
# an option and at most two value words (Grid Engine's '-pe mpi 8'); each scheduler module says which options take two
DIRECTIVE = r"^--?[A-Za-z][A-Za-z0-9_-]*([= ][A-Za-z0-9_.,:=/@%+\[\]-]+( [A-Za-z0-9_.,:=/@%+\[\]-]+)?)?$"
IMAGE_REF = image_refs.REFERENCE
RESOURCE = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"   # a site's resource name (PBS Pro, Grid Engine)
PLACEMENTS = ("pack", "scatter", "free")
ABS_PATH = r"^/[A-Za-z0-9_.@+/-]{0,1023}$"
HOST = r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?$"
BIND = r"^/[A-Za-z0-9_.@+/-]{0,1023}(:/[A-Za-z0-9_.@+/-]{0,1023}(:(ro|rw))?)?$"
MODULE = r"^[A-Za-z0-9_.+/-]{1,128}$"
SOURCE_URL = r"^(https?|git|ssh)://[A-Za-z0-9._~:/?#@!&'()*+,;=%-]{1,2048}$"
# linear time: no two quantifiers may match the same spaces (the former form took minutes on 64 KiB of spaces)
# a pin (bare, '=', PEP 440's '==' and '!=') may end in '.*'; PEP 440's comparisons may not
_CLAUSE = r"(((==|!=|=)\s*)?v?\d+(\.\d+){0,3}(\.\*)?|(>=|<=|>|<|~=)\s*v?\d+(\.\d+){0,3})"
VERSION_REQ = r"^\s*((latest|any|\*|%s(\s*,\s*%s)*)\s*)?$" % (_CLAUSE, _CLAUSE)
# every pattern-checked string is bounded; the bound is checked before the pattern runs
PATTERN_MAX_LENGTH = 4096
# free text that is quoted before it reaches a script: one line, no control characters
ONE_LINE = "^[^\\x00-\\x1f\\x7f\\x85\\u2028\\u2029]*$"
# a command line: one line, or several joined by backslash-newline continuations as in a shell (no per-character
# group, so that Python's re checks a long value in linear time and constant memory)
COMMAND_LINE = ("^(?![\\s\\S]*[^\\\\]\\n)(?!\\n)"
                "[^\\x00-\\x09\\x0b-\\x1f\\x7f\\x85\\u2028\\u2029]*$")
# multi-line shell text (a build command): quoted as one word, no NUL
NO_NUL = "^[^\\x00]*$"


def _obj(props, required=(), title=None, description=None):
    out = {"type": "object", "additionalProperties": False, "properties": props}
    if required:
        out["required"] = list(required)
    if title:
        out["title"] = title
    if description:
        out["description"] = description
    return out


def _s(pattern=None, description=None, max_length=None, **extra):
    out = {"type": "string"}
    if pattern:
        out["pattern"] = pattern
    if max_length:
        out["maxLength"] = max_length
    if description:
        out["description"] = description
    out.update(extra)
    return out


def _int(description=None, minimum=1, maximum=1000000):
    out = {"type": "integer", "minimum": minimum, "maximum": maximum}
    if description:
        out["description"] = description
    return out


def _bool(description=None, default=None):
    # "true"/"false" strings are the original's unit-test inputs: accepted, and read as booleans with a note
    out = {"type": ["boolean", "string"], "pattern": "^(true|false|True|False)$"}
    if description:
        out["description"] = description
    if default is not None:
        out["default"] = default
    return out


def _enum(values, description=None, default=None):
    out = {"enum": list(values)}
    if description:
        out["description"] = description
    if default is not None:
        out["default"] = default
    return out


# user shell by design (pre-/post-execution, target setup): one text or a list of lines, no NUL
SHELL_LINES = {"type": ["string", "array"], "pattern": NO_NUL, "maxLength": 65536,
               "items": _s(NO_NUL, max_length=8192), "maxItems": 256}

DATA = {"type": "object", "description": "Free-form data description (location, size, etl...).",
        "properties": {"location": _s(ONE_LINE, "Where the data lives; an absolute path is bound into the container.")}}

JOB_OPTIONS = _obj({
    "job_name": _s(JOB_NAME, "Job name; also names the script file. Letters, digits, '_', '.', '-'.", default="job"),
    "queue": _s(NAME, "Queue (PBS) or partition (Slurm)."),
    "partition": _s(NAME, "Partition; used as the queue when no queue is given."),
    "architecture_constraint": _s(CONSTRAINT, "Node feature constraint (Slurm --constraint; Torque node properties)."),
    "wall_time_limit": {"type": ["string", "integer"], "pattern": WALLTIME, "minimum": 1,
                        "description": "Wall time in sbatch's --time forms ('M:SS', 'H:MM:SS', 'D-H', 'D-H:MM', "
                                       "'D-H:MM:SS'), but a bare number is seconds; or ISO 8601 'P1DT2H'."},
    "node_count": _int("Number of nodes."),
    "process_count_per_node": _int("MPI processes (tasks) per node."),
    "core_count": _int("Total number of processes (tasks, like Slurm --ntasks) of the job, spread over the nodes; "
                       "each gets core_count_per_process cores."),
    "core_count_per_process": _int("Cores per process (Slurm --cpus-per-task)."),
    "request_gpus": _int("GPUs per node; default 1 when opt_build.acc_type is nvidia or amd, 0 asks for none.",
                         minimum=0, maximum=64),
    "gpu_type": _s(r"^[A-Za-z0-9_.-]{1,64}$", "GPU model for typed requests (Slurm --gres=gpu:TYPE:N)."),
    "memory_limit": {"type": ["string", "integer"], "pattern": MEMORY, "minimum": 1,
                     "description": "Memory per node: MiB as an integer, or '4G', '512M', '1T'."},
    "minimum_memory_per_processor": {"type": ["string", "integer"], "pattern": MEMORY, "minimum": 1,
                                     "description": "Memory per CPU: MiB as an integer, or '2G'."},
    "account": _s(ACCOUNT, "Account (project) to charge; 'project@partition' as some sites write it."),
    "qos": _s(NAME, "Quality of service."),
    "job_array": _s(ARRAY, "Array indexes: '0-9', '1,3,5', '0-99:2', with an optional '%N' throttle."),
    "job_dependency": {"type": ["string", "array"], "pattern": DEPENDENCY,
                       "items": _s(DEPENDENCY), "maxItems": 64,
                       "description": "Dependencies such as 'afterok:123' or a list of them."},
    "defer_job": _s(DEFER, "Earliest start: 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM[:SS]'."),
    "node_exclusive": _bool("Request whole nodes for this job."),
    "placement": _enum(PLACEMENTS, "How the nodes' tasks are placed: PBS Pro place=pack|scatter|free (with "
                                   "node_exclusive ':excl'); without it PBS Pro places as the site's default."),
    "memory_per_gpu": {"type": ["string", "integer"], "pattern": MEMORY, "minimum": 1,
                       "description": "Memory per GPU: MiB as an integer, or '32G' (Slurm --mem-per-gpu; PBS Pro: "
                                      "times the GPUs of each node)."},
    "memory_whole_node": _bool("All the memory of each node (Slurm --mem=0)."),
    "local_scratch": {"type": ["string", "integer"], "pattern": MEMORY, "minimum": 1,
                      "description": "Node-local scratch disk per node: MiB as an integer, or '100G' (Slurm --tmp; "
                                     "PBS Pro and Grid Engine: the site resource local_scratch_resource)."},
    "local_scratch_resource": _s(RESOURCE, "The site's resource for node-local scratch on PBS Pro (a chunk resource) "
                                           "and Grid Engine (-l NAME=size), e.g. tmpfs at UCL."),
    "gpu_resource": _s(RESOURCE, "The site's GPU resource on Grid Engine (-l NAME=N); default gpu."),
    "gpu_type_resource": _s(RESOURCE, "The site's chunk resource for the GPU model on PBS Pro (NAME=gpu_type); "
                                      "default gpu_type."),
    "parallel_environment": _s(NAME, "Grid Engine parallel environment; default smp on one node, mpi over several."),
    "standard_output_file": _s(OUTPUT_FILE, "Standard output file, relative to the job's working directory, no '..' "
                                            "(scheduler patterns such as %j allowed). Default: the scheduler's "
                                            "naming, unique per job (Slurm <name>-%j.out, <name>-%A_%a.out for "
                                            "arrays; PBS <name>.o<id>)."),
    "standard_error_file": _s(OUTPUT_FILE, "Standard error file, relative to the job's working directory, no '..'."),
    "combine_stdout_stderr": _bool("Write standard error into the output file (true wins over "
                                   "standard_error_file; absent: combined unless standard_error_file is given).",
                                   default=True),
    "request_event_notification": _s(EVENTS, "Mail events: Slurm words (BEGIN,END,FAIL,ALL,NONE...) or PBS letters (abe, n)."),
    "email_address": _s(EMAIL, "Mail recipient(s) for event notifications."),
    "copy_environment": _bool("Export the submitting environment to the job."),
    "copy_environment_variable": _s(EXPORT_LIST, "Variables to export: 'A,B=1'."),
    "request_specific_nodes": _s(NODELIST, "Node list, e.g. 'n[01-04]'."),
    "extra_directives": {"type": "array", "maxItems": 64, "items": _s(DIRECTIVE),
                         "description": "Raw scheduler options ('--reservation=x', '-pe mpi 8'), one option per item; "
                                        "each scheduler allows its own list (docs/robustness.md)."},
}, title="job_options", description="Scheduler request: resources, limits, notification.")

BUILD = _obj({
    "src": _s(SOURCE_URL, "Source to fetch: https URL of an archive or file, or a git repository (.git)."),
    "build_command": _s(NO_NUL, "Build command, run with bash; {{BUILD_PARALLELISM}} (spaces inside the braces "
                                "allowed) is replaced by build_parallelism, nothing else is substituted.",
                        max_length=8192),
    "build_parallelism": _int("Parallel build jobs.", maximum=4096),
}, required=("src", "build_command"), title="build")

APPLICATION = _obj({
    "app_tag": _s(NAME, "Application name, used to find application images."),
    "app_type": _enum(APP_TYPES, "Kind of application."),
    "executable": _s(COMMAND_LINE, "Program to run, split into words like a shell would; only $NAME/${NAME} "
                                   "outside single quotes is expanded (at run time), nothing else.", max_length=4096),
    "arguments": {"type": ["string", "array"], "pattern": COMMAND_LINE, "maxLength": 16384,
                  "items": _s(ONE_LINE, max_length=4096), "maxItems": 1024,
                  "description": "Arguments: a string split like a shell would (backslash-newline continues the "
                                 "line; only $NAME/${NAME} outside single quotes is expanded), or a list of exact "
                                 "words (never expanded)."},
    "container_runtime": _s(IMAGE_REF, "Your own image: docker://, library://, oras:// reference, a .sif path or "
                                       "a .sqsh path (container_engine: pyxis); "
                                       "a bare 'repo/name:tag' or 'name' is read as docker://..., '' as no container."),
    "mpi_ranks": _int("MPI ranks (processes) in total."),
    "threads": {"type": ["integer", "string"], "minimum": 1, "maximum": 4096, "pattern": "^unset$",
                "description": "Threads per process (OMP_NUM_THREADS). Left out: each rank's CPUs at run time; 'unset': "
                               "no OMP_NUM_THREADS, as the launcher and the framework leave it (torchrun: 1 per rank)."},
    "minimal_efficiency": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                           "description": "Lowest acceptable parallel efficiency; caps ranks through the scaling model."},
    "storage_class_pref": _enum(STORAGE_CLASSES, "Preferred storage class."),
    "build": BUILD,
    "environment": {"type": "object", "maxProperties": 256, "propertyNames": {"pattern": ENV_NAME},
                    "additionalProperties": {"type": ["string", "number", "boolean"], "pattern": ONE_LINE, "maxLength": 4096},
                    "description": "Extra environment variables for the run (values are quoted)."},
    "environment_expanded": {"type": "object", "maxProperties": 64, "propertyNames": {"pattern": ENV_NAME},
                             "additionalProperties": {"type": "string", "pattern": ONE_LINE, "maxLength": 4096},
                             "description": "Environment variables whose values name other variables, expanded "
                                            "when the job runs, in its shell on the first node: only $NAME and "
                                            "${NAME} outside single quotes are expanded (e.g. "
                                            "NCCL_SOCKET_IFNAME: '${SITE_IFNAME}'); one word."},
    "secrets": {"type": "object", "maxProperties": 64, "propertyNames": {"pattern": ENV_NAME},
                "additionalProperties": {"type": "object", "minProperties": 1, "maxProperties": 1,
                                         "additionalProperties": False, "properties": {
                                             "env": _s(ENV_NAME, "Read from this variable of the job's environment "
                                                                 "on the node when the job runs."),
                                             "file": _s(ABS_PATH, "Read from this file (its text, less the last "
                                                                  "line break) on the node at run time."),
                                             "value": {"type": "string", "pattern": ONE_LINE, "maxLength": 4096,
                                                       "description": "The value itself: written only into the "
                                                                      "private job script, never into results "
                                                                      "or reports."}}},
                "description": "Environment variables holding secrets (tokens, passwords): {NAME: {env: VAR}} or "
                               "{NAME: {file: /path}} read on the node when the job runs (the value never "
                               "enters the script), {NAME: {value: text}} written only into the job script "
                               "(0700); no secret value is returned, reported or shown."},
    "working_directory": _s(ABS_PATH, "Absolute directory to run in (default: the submit directory)."),
    "launch_options": {"type": "array", "maxItems": 32, "items": _s(DIRECTIVE),
                       "description": "srun options of the launch (Slurm), through srun's allow-list: "
                                      "--kill-on-bad-exit=1, --wait=60, --distribution=block:block, --mpi=pmix, "
                                      "--accel-bind=gn, --hint=nomultithread, ..."},
    "cpu_bind": _s(r"^(verbose,)?(none|cores|threads|sockets|ldoms|rank|(map_cpu|mask_cpu|map_ldom|mask_ldom):"
                   r"[0-9A-Fa-fx,*]{1,512})$", "CPU binding of each task (srun --cpu-bind): cores, threads, sockets, "
                   "none, map_cpu:0,8,..."),
    "gpu_bind": _s(r"^(verbose,)?(closest|none|single:[0-9]{1,4}|(map_gpu|mask_gpu):[0-9A-Fa-fx,*]{1,512})$",
                   "GPU binding of each task (srun --gpu-bind): closest, none, single:N, map_gpu:0,1,..."),
    "bind_paths": {"type": "array", "maxItems": 64, "items": _s(BIND),
                   "description": "Container binds: '/src', '/src:/dst' or '/src:/dst:ro'."},
    "modules": {"type": "array", "maxItems": 64, "items": _s(MODULE),
                "description": "Environment modules to load before the run."},
    "launcher": _enum(LAUNCHERS, "The launcher that starts the ranks (one field for every job): srun (one task per "
                                 "rank), mpirun or mpiexec (the scheduler's host file) for MPI programs; for a "
                                 "distributed training (app_type-ai_training.config.distributed_training) srun, "
                                 "lightning (srun per rank, the program as it is: Lightning reads Slurm's variables), "
                                 "torchrun or accelerate (one per node, starting the node's ranks; the image or "
                                 "environment must have it); none: the program starts its own processes; auto: the "
                                 "scheduler's MPI launcher (srun under Slurm, mpirun elsewhere), for a training srun "
                                 "under Slurm and torchrun --standalone on one node elsewhere.", default="auto"),
    "fabric": _s(NAME, "A fabric preset of the site profile (its fabric section; modak --site, the modules' site "
                       "option): its variables are exported as application.environment and environment_expanded "
                       "are, and a variable this application sets itself wins over the preset's."),
    "mpi_library": _enum(MPI_LIBRARIES, "MPI library the program was built with, for a run without an image "
                                        "that says it (srun names its PMI: Open MPI pmix, MPICH pmi2)."),
    "pre-execution": dict(SHELL_LINES, description="Shell lines run as given (user shell, like a batch script "
                                                   "body) on the host before the build and the run."),
    "post-execution": dict(SHELL_LINES, description="Shell lines run as given on the host after the run, also "
                                                    "when it failed; the job keeps the run's exit status."),
}, title="application", description="What to run.")

TARGET = _obj({
    "job_scheduler_type": _enum(SCHEDULERS, "Scheduler: %s." % scheduler_registry.DESCRIPTION),
    "name": _s(NAME, "Infrastructure name."),
    "container_engine": _enum(ENGINES, "Container runtime on the target (pyxis: Slurm's srun --container-image, "
                                       "enroot's squashfs images).", default="apptainer"),
    "image_dir": _s(ABS_PATH, "Directory of pulled images on the target: .sif files, Charliecloud "
                              "directories (default $MODAK_IMAGE_DIR, $SINGULARITY_DIR or ~/.modak/images)."),
    "image_fetch": _enum(IMAGE_FETCH, "Who fetches a registry image: 'staged' (default) the deployment stages it into "
                                      "image_dir before submitting and the job only checks that it is there, failing "
                                      "with a clear message if not; 'job' the job pulls it when missing (compute nodes "
                                      "need the registry).", default="staged"),
    "login_host": _s(HOST, "Host (inventory name or DNS name) where jobs are submitted: the cluster's login node."),
    "work_dir": _s(ABS_PATH, "Absolute directory on the login host where the job script is copied and submitted."),
    "partition": _s(NAME, "Partition (queue) used when job_options names none."),
    "queue_type": _enum(SCHEDULERS, "The original's name for job_scheduler_type (EXAMPLE.md)."),
    "modules": {"type": "array", "maxItems": 64, "items": _s(MODULE),
                "description": "Environment modules this target needs for every job ('module load' first)."},
    "setup": dict(SHELL_LINES, description="Shell lines this target needs for every job (the original's per-"
                                           "infrastructure scripts), run as given before the application's."),
    "mpi_type": _enum(MPI_TYPES, "The site's PMI for MPI programs under srun (Slurm's --mpi= plugin); it wins "
                                 "over the MPI library's own. 'none': no --mpi=, the site's MpiDefault decides."),
}, title="target", description="Where to run.")

OPT_BUILD = _obj({
    "cpu_type": _enum(CPU_TYPES, "CPU family: x86, amd (x86), arm, power."),
    "acc_type": _enum(ACC_TYPES, "Accelerator: nvidia, amd, fpga; 'none', '' or absent for none."),
    "cpu_isa": _enum(ISA_LEVELS, "Instruction-set level the nodes support, e.g. x86-64-v3."),
    "cpu_microarch": _enum(MICROARCHS, "Microarchitecture (archspec name), e.g. sapphirerapids."),
    "cpu_features": {"type": "array", "maxItems": 128, "items": _s(r"^[a-z0-9_.]{1,32}$"),
                     "description": "Extra CPU flags as /proc/cpuinfo names, e.g. amx_bf16."},
    "cuda_version": _s(r"^\d+(\.\d+){0,2}$", "Newest CUDA the nodes' driver supports."),
    "rocm_version": _s(r"^\d+(\.\d+){0,2}$", "ROCm version on the nodes."),
    "python_packages": {"type": "array", "maxItems": 32, "uniqueItems": True,
                        "items": _s(PYTHON_PACKAGE),
                        "description": "Python packages modak's image installs beside the framework, pinned with "
                                       "'==' (the launcher's: accelerate==1.15.0, lightning==2.6.6, deepspeed==...); "
                                       "only an image that carries them fits."},
}, required=("cpu_type",), title="opt_build")

_FW_VERSION = _s(VERSION_REQ, "Version request: '2', '2.1' or '2.1.*' (a prefix), '2.1.3', 'latest', or PEP 440 "
                              "clauses: '~=2.4', '==2.4.*', '!=2.5', '>=2.4,<2.10'.")
AI_FRAMEWORK = {
    fw.name: _obj(dict(
        [("version", _FW_VERSION)]
        + [(option, _enum(words, description)) for option, (words, description) in fw.choices.items()]
        + [(option, _bool(description)) for option, (_feature, description) in fw.switches.items()]))
    for fw in frameworks.FRAMEWORKS.values()
}

AI_SECTION_PROPS = {
    "config": _obj({
        "ai_framework": _enum(FRAMEWORKS, "AI framework."),
        "type": _s(ONE_LINE, "Model kind (cnn, rnn, ...).", max_length=256),
        "distributed_training": _bool("Train over several processes: data-parallel (PyTorch DDP), one rank per "
                                      "GPU on GPU targets; nodes come from job_options.node_count."),
        "processes_per_node": _int("Training processes (ranks) per node when distributed_training is true; "
                                   "default request_gpus on GPU targets (one rank per GPU), else 1.", maximum=1024),
        "distributed_backend": _enum(DIST_BACKENDS, "Collective backend: gloo (CPUs), nccl (NVIDIA GPUs; RCCL on "
                                                    "AMD), auto picks nccl on GPU targets and gloo elsewhere; the "
                                                    "program reads it from MODAK_DIST_BACKEND.", default="auto"),
        "distributed_launch": _enum(DIST_LAUNCHES, "The old name of application.launcher for a distributed "
                                                   "training (read as it; give one of the two).", default="auto"),
        "layers": _int("Layers.", maximum=100000),
        "parameters": _int("Parameters.", maximum=10 ** 13),
    }, required=("ai_framework",)),
    "data": DATA,
}
AI_SECTION_PROPS.update({"ai_framework-%s" % k: v for k, v in AI_FRAMEWORK.items()})

HPC_SECTION_PROPS = {
    "config": _obj({"parallelisation": _enum(PARALLELISATIONS, "Parallel programming model.")},
                   required=("parallelisation",)),
    "data": DATA,
    "parallelisation-mpi": _obj({
        "library": _enum(MPI_LIBRARIES, "MPI library."),
        "version": _FW_VERSION,
        "scaling_efficiency": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "core_subscription": _int("Processes per core.", maximum=64),
        "message_size": _s(ONE_LINE, "Typical message size (small, medium, large).", max_length=64),
    }),
    "parallelisation-openmp": _obj({
        "number_of_threads": _int("Threads.", maximum=4096),
        "scaling_efficiency": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "affinity": _enum(("close", "spread", "master", "primary", "true", "false"), "OMP_PROC_BIND value."),
    }),
}
for _model in ("openacc", "opencl", "opencc"):
    HPC_SECTION_PROPS["parallelisation-%s" % _model] = _obj({
        "compiler": _enum(("pgi", "cray", "nvhpc", "gcc", "clang"), "Compiler."),
        "version": _FW_VERSION,
        "number_of_acc": _int("Accelerators.", maximum=64),
    })

TUNING = _obj({
    "threads": {"type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": True,
                "items": {"type": "integer", "minimum": 1, "maximum": 4096}, "description": "Threads to try."},
    "batch_size": {"type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": True,
                   "items": {"type": "integer", "minimum": 1, "maximum": 65536}, "description": "Batch sizes to try."},
    "precision": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True,
                  "items": _enum(("fp32", "bf16")), "description": "Precisions to try (bf16 = autocast)."},
    "compile": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True,
                "items": {"type": "boolean"}, "description": "Graph compiler (torch.compile) off and/or on."},
    "channels_last": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True,
                      "items": {"type": "boolean"}, "description": "NHWC memory format off and/or on."},
    "onednn": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True,
               "items": {"type": "boolean"}, "description": "oneDNN kernels off and/or on."},
    "cudnn_benchmark": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True,
                        "items": {"type": "boolean"},
                        "description": "cuDNN autotuning (torch.backends.cudnn.benchmark) off and/or on (GPUs)."},
}, title="tuning", description=(
    "Search space of the performance model: the values each knob may take. The program receives the choice "
    "as OMP_NUM_THREADS and --batch-size/--precision/--compile/--channels-last/--onednn/--cudnn-benchmark."))

SIGNALS = ("USR1", "USR2", "TERM", "INT", "HUP", "QUIT")
REQUEUE_EVENTS = ("time_limit", "preemption", "node_failure")
# a directory relative to the job's working directory (no '..' segment) or absolute
CHECKPOINT_DIR = r"^(/[A-Za-z0-9_.@+/-]{0,1023}|(?!(.*/)?\.\.(/|$))[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]{0,1023})$"
_DURATION = {"type": ["string", "integer"], "pattern": WALLTIME, "minimum": 1}

RESILIENCE = _obj({
    "signal": _enum(SIGNALS, "The signal the training program receives when it must checkpoint and stop: before the "
                             "wall time limit, on preemption or on cancellation. Default TERM for launchers that "
                             "start the node's ranks (torchrun, accelerate: torchrun dies on USR1), USR1 otherwise."),
    "signal_lead_time": dict(_DURATION, description="How long before the wall time limit the signal comes: the time "
                                                    "to write a checkpoint, with room to spare; shorter than "
                                                    "wall_time_limit. Default 300 s, at most half the wall time."),
    "requeue_on": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True,
                   "items": _enum(REQUEUE_EVENTS),
                   "description": "What puts the job back in the queue to resume from its checkpoint: time_limit "
                                  "(the job requeues itself after the signal, or when the program exits 99; local: "
                                  "its script runs the program again), preemption, node_failure (both or neither "
                                  "where the scheduler requeues: its rerunnable mark joins them). Default: every "
                                  "event the scheduler can requeue on."},
    "max_restarts": _int("Requeues at most (the job's restarts); default: enough for total_training_time, else 3.",
                         minimum=0, maximum=1000),
    "checkpoint_dir": _s(CHECKPOINT_DIR, "Where the program writes its checkpoints (MODAK_CHECKPOINT_DIR): absolute, "
                                         "or relative to the job's working directory; default checkpoints/<job_name>. "
                                         "Every node must see it."),
    "total_training_time": dict(_DURATION, description=(
        "The whole training's time, longer than one job may run: modak requeues while restarts remain and the "
        "segments' time together is less than this. Needs wall_time_limit.")),
}, title="resilience", description=(
    "Long training that outlives its time limit, a preemption or a lost node: the scheduler signals the job before "
    "its limit, the job forwards the signal to every rank, waits for the checkpoint and requeues itself while "
    "restarts remain (local: runs the program again). The program reads MODAK_CHECKPOINT_DIR, MODAK_RESTART_COUNT "
    "(0 on the first run) and, where the job requeues itself, MODAK_REQUEUE_EXIT (99: the status that asks for a "
    "new run)."))

PLACEMENT = _obj({
    "partitions": {"type": "array", "minItems": 1, "maxItems": 16, "items": _obj({
        "name": _s(NAME, "The partition (Slurm) or queue."),
        "hardware_class": _s(ONE_LINE, "The hardware class of its nodes as the results store names it ('AMD EPYC "
                                       "7763 64-Core Processor|x86_64|128c|avx2'): the runs recorded on nodes of "
                                       "this class predict the run time; left out, the runs recorded on this "
                                       "partition do.", max_length=512),
    }, required=("name",), title="candidate partition"),
        "description": "The partitions the job may run in; modak writes the one where it is predicted to finish "
                       "first."},
}, required=("partitions",), title="placement", description=(
    "Where to run, chosen by the predicted time to result: for each candidate partition the scheduler says whether "
    "the job fits and when it would start (Slurm: sbatch --test-only; a scheduler that cannot tell counts from now), "
    "and the recorded runs of the application there (the results store) predict its run time; the earliest "
    "predicted finish is written as the job's partition, the runners-up are explained."))

OPTIMISATION = _obj({
    "enable_opt_build": _bool("Prefer optimised builds (default true when this section is present)."),
    "enable_autotuning": _bool("Tune run settings by benchmarking.", default=False),
    "app_type": _enum(OPT_APP_TYPES, "Optimisation profile; its 'app_type-<name>' section holds the details."),
    "opt_build": OPT_BUILD,
    "autotuning": _obj({"tuner": _s(NAME), "input": _s(ONE_LINE, max_length=4096)}, required=("tuner", "input")),
    "tuning": TUNING,
    "app_type-ai_training": _obj(AI_SECTION_PROPS, required=("config",)),
    "app_type-ai_inference": _obj(AI_SECTION_PROPS, required=("config",)),
    "app_type-hpc": _obj(HPC_SECTION_PROPS, required=("config",)),
}, required=("app_type",), title="optimisation", description="What to optimise for.")

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "modak optimisation DSL",
    "description": "MODAK's job model (job_options, application, target, optimisation) as a superset.",
    "type": "object",
    "additionalProperties": False,
    "required": ["job"],
    "properties": {
        "job": _obj({
            "job_options": JOB_OPTIONS,
            "application": APPLICATION,
            "target": TARGET,
            "optimisation": OPTIMISATION,
            "resilience": RESILIENCE,
            "placement": PLACEMENT,
            # output fields of the original; accepted on input and ignored
            "job_script": {"type": "string"},
            "build_script": {"type": "string"},
            "job_content": {"type": "string"},
            "build_content": {"type": "string"},
        }, required=("application",)),
    },
}


SITE_SCHEMA_ID = "https://sodalite.eu/modak/site.schema.json"
# the site profile's sections: defaults of the DSL's site fields (job.<section>), and the fabric presets
SITE_TARGET_FIELDS = tuple(k for k in TARGET["properties"] if k != "queue_type")   # the canonical names only
SITE_APPLICATION_FIELDS = ("launcher", "fabric")
FABRIC_PRESET = _obj({
    "description": _s(ONE_LINE, "What the preset is for, and where its values come from.", max_length=1024),
    "environment": dict(APPLICATION["properties"]["environment"],
                        description="Variables exported for the run, as application.environment's are."),
    "environment_expanded": dict(APPLICATION["properties"]["environment_expanded"],
                                 description="Variables expanded when the job runs, as application."
                                             "environment_expanded's are (one word each)."),
}, title="fabric preset")

SITE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SITE_SCHEMA_ID,
    "title": "modak site profile",
    "description": "One site's defaults for the DSL's site fields (a DSL's own values win, field by field: mappings "
                   "merged, lists and scalars replaced) and its fabric presets (application.fabric names one).",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "description": _s(ONE_LINE, "What site this profile describes.", max_length=1024),
        "target": _obj({k: TARGET["properties"][k] for k in SITE_TARGET_FIELDS}, title="target",
                       description="Defaults of job.target."),
        "job_options": dict(JOB_OPTIONS, description="Defaults of job.job_options."),
        "application": _obj({k: APPLICATION["properties"][k] for k in SITE_APPLICATION_FIELDS},
                            title="application", description="Defaults of job.application."),
        "fabric": {"type": "object", "maxProperties": 64, "propertyNames": {"pattern": NAME, "maxLength": 64},
                   "additionalProperties": FABRIC_PRESET,
                   "description": "Fabric presets by name: the variables a network fabric needs (NCCL, libfabric, "
                                  "UCX...), chosen by a DSL's application.fabric."},
    },
}


def _bound_patterns(node):
    """Give every pattern-checked string without a maxLength the default bound (validation stays linear)."""
    if isinstance(node, dict):
        if "pattern" in node and "maxLength" not in node:
            node["maxLength"] = PATTERN_MAX_LENGTH
        for value in node.values():
            _bound_patterns(value)
    elif isinstance(node, list):
        for value in node:
            _bound_patterns(value)


_bound_patterns(SCHEMA)
_bound_patterns(SITE_SCHEMA)


_PATTERNS = {}


def end_anchored(pattern):
    """The schema's pattern with JSON Schema (ECMA 262) meaning: '$' is the end of the text.

    Python's '$' also matches before a final newline, which let 'job\\n' through every '^...$' pattern.
    """
    if pattern not in _PATTERNS:
        out, escaped, in_class = [], False, False
        for char in pattern:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == "[" and not in_class:
                in_class = True
            elif char == "]" and in_class:
                in_class = False
            elif char == "$" and not in_class:
                char = "\\Z"
            out.append(char)
        # ASCII: '\\d' is 0-9 only, as in JSON Schema; other scripts' digits never reach a directive
        _PATTERNS[pattern] = re.compile("".join(out), re.ASCII)
    return _PATTERNS[pattern]
