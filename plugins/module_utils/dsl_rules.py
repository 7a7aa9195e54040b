# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DSL rules a JSON Schema cannot state: key types, bash's own variables, raw directives, real dates, numbers,
fields that exclude or need each other.

Each function takes a part of the canonical document (compat.normalise) and returns DslProblems with their paths;
``document_problems`` runs them all on a document the schema accepted.
"""

from __future__ import annotations

import datetime
import math
import re

from ansible_collections.sodalite.modak.plugins.module_utils import cpu, distributed, resilience, shell
from ansible_collections.sodalite.modak.plugins.module_utils.dsl_values import mail_events, nested, walltime_seconds
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtime_registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra, registry
from ansible_collections.sodalite.modak.plugins.module_utils.versions import VersionRequest

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
# bash refuses to assign these (`readonly -p` of bash 5): the script would stop at the export
BASH_READONLY = frozenset(("BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"))
# bash computes these itself: an assignment is ignored or changes their meaning, never reaches the program
BASH_DYNAMIC = frozenset(("BASHPID", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_COMMAND", "BASH_LINENO",
                          "BASH_SOURCE", "BASH_SUBSHELL", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "FUNCNAME",
                          "GROUPS", "HISTCMD", "LINENO", "RANDOM", "SECONDS", "SRANDOM"))
_DEFER = ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S")
MAX_SPLIT = 16384
# memory requests that exclude each other: per node, per CPU, per GPU, the whole node
MEMORY_FIELDS = ("memory_limit", "minimum_memory_per_processor", "memory_per_gpu", "memory_whole_node")


def environment_problems(environment, base="job.application.environment"):
    """Keys must be text, valid variable names, and not variables bash owns."""
    out = []
    if not isinstance(environment, dict):
        return out
    for key in environment:
        where = path_str(base.split(".") + [key if isinstance(key, str) else repr(key)])
        if not isinstance(key, str):
            out.append(DslProblem(where, "a variable name must be text, not %s" % type(key).__name__, repr(key),
                                  "quote the name, e.g. \"NAME\": value"))
        elif not ENV_NAME.match(key):
            out.append(DslProblem(where, "has a variable name that is not accepted", key,
                                  "names are letters, digits and '_', not starting with a digit"))
        elif key in BASH_READONLY:
            out.append(DslProblem(where, "is a read-only variable of bash: the job would stop at its export", key,
                                  "choose another name"))
        elif key in BASH_DYNAMIC:
            out.append(DslProblem(where, "is a variable bash sets itself: the value would not reach the program",
                                  key, "choose another name"))
    return out


def secret_problems(app):
    """A secret's name is set once: not also in application.environment or environment_expanded."""
    secrets = app.get("secrets")
    if not isinstance(secrets, dict):
        return []
    out = []
    for field in ("environment", "environment_expanded"):
        other = app.get(field) if isinstance(app.get(field), dict) else {}
        for name in sorted(set(secrets) & set(other), key=str):
            out.append(DslProblem("job.application.secrets.%s" % name, "is also in application.%s" % field, None,
                                  "set it in one of them"))
    return out


def expanded_problems(app, base="job.application.environment_expanded"):
    """Values of environment_expanded: one word each (split as a shell would, only $NAME/${NAME} expanded), and no
    name set twice."""
    expanded = app.get("environment_expanded")
    if not isinstance(expanded, dict):
        return []
    out = []
    literal = app.get("environment") if isinstance(app.get("environment"), dict) else {}
    for key, value in expanded.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        where = path_str(base.split(".") + [key])
        if key in literal:
            out.append(DslProblem(where, "is also in application.environment", value, "set it in one of them"))
            continue
        try:
            words = shell.split_words(value)
        except ValueError as exc:
            out.append(DslProblem(where, "cannot be read as one word: %s" % exc, value, "balance the quotes"))
            continue
        if len(words) != 1:
            out.append(DslProblem(where, "must be one word (it is %d)" % len(words), value,
                                  "quote the spaces: \"$A $B\" or '...'"))
    return out


def scheduler_of(doc):
    """The registry's name of the document's scheduler (aliases resolved; the fallback when none is named)."""
    target = doc.get("job", {}).get("target") if isinstance(doc.get("job"), dict) else None
    name = target.get("job_scheduler_type") if isinstance(target, dict) else None
    return registry.ALIASES.get(name, name) if name is not None else registry.FALLBACK


def engine_problems(doc):
    """A container engine the scheduler cannot start (pyxis enters through srun's options: Slurm only), and a local
    image file of another engine's kind (a squashfs file for enroot, a SIF file for Apptainer)."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    target = job.get("target") if isinstance(job.get("target"), dict) else {}
    app = job.get("application") if isinstance(job.get("application"), dict) else {}
    engine = target.get("container_engine", "apptainer")
    scheduler = scheduler_of(doc)
    out = []
    if engine in runtime_registry.SRUN_PLUGINS and not registry.capable(scheduler, registry.SRUN_STEPS):
        out.append(DslProblem("job.target.container_engine", "enters the container through srun's options, and the "
                              "scheduler is %s" % scheduler, engine, "use job_scheduler_type: slurm, or apptainer"))
    image = app.get("container_runtime")
    if isinstance(image, str) and "://" not in image and image:
        squashfs = image.endswith(".sqsh")
        if squashfs != (engine in runtime_registry.SRUN_PLUGINS):
            out.append(DslProblem("job.application.container_runtime", "is a %s file and the container engine is %s"
                                  % ("squashfs (enroot)" if squashfs else "SIF", engine), image,
                                  "use container_engine: pyxis for a .sqsh file, apptainer for a .sif file"))
    return out


def launch_problems(app, scheduler, base="job.application"):
    """srun options of the launch: Slurm's srun only, through its allow-list (schedulers/extra.py)."""
    out = []
    given = [key for key in ("launch_options", "cpu_bind", "gpu_bind") if app.get(key)]
    if given and not registry.capable(scheduler, registry.SRUN_STEPS):
        return [DslProblem("%s.%s" % (base, key), "sets srun's options, and the scheduler is %s" % scheduler, app[key],
                           "remove it, or use job_scheduler_type: slurm") for key in given]
    options = app.get("launch_options")
    for index, option in enumerate(options if isinstance(options, list) else ()):
        if not isinstance(option, str):
            continue
        found = extra.problem(scheduler, option, launch=True)
        field = extra.split(option)[1].replace("-", "_")
        if found:
            out.append(DslProblem("%s.launch_options[%d]" % (base, index), found[0], option, found[1]))
        elif field in ("cpu_bind", "gpu_bind") and app.get(field):
            out.append(DslProblem("%s.launch_options[%d]" % (base, index), "binds as the field %s does" % field,
                                  option, "keep one of them"))
    return out


def directive_problems(directives, scheduler, base="job.job_options.extra_directives"):
    """Raw directives: only the documented options of the scheduler (schedulers/extra.py), no forged key."""
    out = []
    if not isinstance(directives, list):
        return out
    for index, directive in enumerate(directives):
        if not isinstance(directive, str) or not directive.startswith("-"):
            continue                    # the schema reports it
        found = extra.problem(scheduler, directive)
        if found:
            out.append(DslProblem("%s[%d]" % (base, index), found[0], directive, found[1]))
    return out


def defer_problems(value, where="job.job_options.defer_job"):
    """A start time must be a date (and time) that exists: 2026-02-30 does not."""
    if not isinstance(value, str) or len(value) > 19:
        return []
    for fmt in _DEFER:
        try:
            datetime.datetime.strptime(value, fmt)
            return []
        except ValueError:
            continue
    return [DslProblem(where, "is not a date and time that exists", value, "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]")]


def number_problems(node, path=None):
    """NaN and infinities anywhere in the document (YAML .nan/.inf, JSON NaN/Infinity, 1e999)."""
    path = [] if path is None else path
    out = []
    if len(path) > 64:
        return out                      # deeper documents are refused at load
    if isinstance(node, float) and not math.isfinite(node):
        out.append(DslProblem(path_str(path), "is not a finite number", repr(node), "give a finite number"))
    elif isinstance(node, dict):
        for key, value in node.items():
            out.extend(number_problems(value, path + [key if isinstance(key, (str, int)) else repr(key)]))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(number_problems(value, path + [index]))
    return out


def program_problems(words):
    """The program word: bash runs a first word starting with '%' as 'fg', even quoted or after 'command'. A problem
    of an argument that is the program because the executable is empty is the executable's."""
    where = "job.application.executable" if "executable" in words else "job.application.arguments"
    first = (words.get("executable") or []) + (words.get("arguments") or [])
    if first and first[0].startswith("%"):
        return [DslProblem(where, "the program name starts with '%', which bash reads as a job (fg)", first[0],
                           "name the program by its path, e.g. ./%s" % first[0])]
    if first and first[0].startswith("-"):
        # after a launcher (srun, torchrun, mpirun) the word would be the launcher's own option
        # (--container-image=..., --rdzv-endpoint=..., --mca plm_rsh_agent sh), past launch_options' allow-list
        return [DslProblem(where, "the program name starts with '-', which a launcher reads as its own option",
                           first[0], "name the program first (e.g. python3 train.py, or ./%s for a file of that name); a "
                           "launcher's options go in application.launch_options" % first[0])]
    if first and first[0] in (".", "source"):
        return [DslProblem(where, "'%s' is bash's own command: it would read a file into the job's shell instead of "
                           "running a program" % first[0], first[0],
                           "name the program by its path, e.g. ./run.sh, or put the line in target.setup")]
    return []


# ---------------------------------------------------------------- the whole document

def document_problems(doc):
    """The rules of a whole canonical document (its parts' rules below, distributed training's)."""
    out = []
    job = doc.get("job", {})
    opts = job.get("job_options") or {}
    app = job.get("application") or {}
    opt = job.get("optimisation")
    base = "job.job_options"

    if "wall_time_limit" in opts:
        try:
            if walltime_seconds(opts["wall_time_limit"]) <= 0:
                out.append(DslProblem(base + ".wall_time_limit", "must be longer than zero", opts["wall_time_limit"]))
        except ValueError as exc:
            out.append(DslProblem(base + ".wall_time_limit", str(exc), opts["wall_time_limit"],
                                  "use seconds, 'M:SS', 'H:MM:SS', 'D-H', 'D-H:MM', 'D-H:MM:SS' or 'P1DT2H'"))
    events = opts.get("request_event_notification")
    if events is not None:
        try:
            words = mail_events(events)
        except ValueError as exc:
            out.append(DslProblem(base + ".request_event_notification", str(exc), events,
                                  "Slurm words (BEGIN,END,FAIL,ALL,NONE) or PBS letters (abe, n)"))
        else:
            if words != ("NONE",) and not opts.get("email_address"):
                out.append(DslProblem(base + ".email_address", "is required when event notifications are requested",
                                      hint="add an email address or drop request_event_notification"))
    if opts.get("combine_stdout_stderr") is False and not opts.get("standard_error_file"):
        out.append(DslProblem(base + ".standard_error_file", "is required when combine_stdout_stderr is false",
                              hint="name an error file, or set combine_stdout_stderr to true"))
    if opts.get("queue") and opts.get("partition") and opts["queue"] != opts["partition"]:
        out.append(DslProblem(base + ".partition", "differs from queue; both name the same thing",
                              opts["partition"], "give only one of queue and partition"))
    target = job.get("target") or {}
    kinds = set(registry.ALIASES.get(target[k], target[k]) for k in ("job_scheduler_type", "queue_type")
                if isinstance(target.get(k), str))
    if len(kinds) > 1:
        out.append(DslProblem("job.target.queue_type", "differs from job_scheduler_type; both name the scheduler",
                              target["queue_type"], "give only job_scheduler_type"))
    memory = [key for key in MEMORY_FIELDS if opts.get(key) not in (None, False)]
    for key in memory[1:]:
        out.append(DslProblem(base + "." + key, "cannot be combined with %s (schedulers take one memory request: "
                              "Slurm's --mem, --mem-per-cpu and --mem-per-gpu exclude each other)" % memory[0],
                              hint="keep one of %s" % ", ".join(memory)))
    if opts.get("memory_per_gpu") is not None and opts.get("request_gpus") == 0:
        out.append(DslProblem(base + ".memory_per_gpu", "asks memory per GPU of a job without GPUs (request_gpus 0)",
                              hint="ask for GPUs, or use memory_limit"))

    words = {}
    for key in ("executable", "arguments"):
        value = app.get(key)
        # shlex is quadratic in the token length: only split what the schema lets through (16 KiB at most)
        if isinstance(value, str) and len(value) <= MAX_SPLIT:
            try:
                words[key] = shell.split_words(value)
            except ValueError as exc:
                out.append(DslProblem("job.application." + key, "cannot be split into words: %s" % exc, value,
                                      "balance the quotes, or give arguments as a list"))
        elif isinstance(value, list):
            words[key] = [str(v) for v in value]
    first = (words.get("executable") or []) + (words.get("arguments") or [])
    if first and not first[0].strip():
        where = "job.application.executable" if words.get("executable") else "job.application.arguments"
        out.append(DslProblem(where, "the program to run is an empty word", first[0],
                              "name the program first, e.g. ./app or python3"))

    out.extend(program_problems(words))
    out.extend(environment_problems(app.get("environment")))
    out.extend(environment_problems(app.get("environment_expanded"), "job.application.environment_expanded"))
    out.extend(expanded_problems(app))
    out.extend(environment_problems(app.get("secrets"), "job.application.secrets"))
    out.extend(secret_problems(app))
    out.extend(directive_problems(opts.get("extra_directives"), scheduler_of(doc)))
    out.extend(defer_problems(opts.get("defer_job")))
    out.extend(engine_problems(doc))
    out.extend(launch_problems(app, scheduler_of(doc)))
    out.extend(distributed.launcher_problems(doc))
    out.extend(distributed.interpreter_problems(words, doc))
    out.extend(resilience.problems(doc, scheduler_of(doc), walltime_seconds))
    out.extend(placement_problems(job, scheduler_of(doc)))
    if isinstance(opt, dict):
        out.extend(_optimisation_problems(opt))
        out.extend(distributed.problems(doc))
    return out


def placement_problems(job, scheduler):
    """job.placement: each partition listed once, no partition of job_options beside it (placement writes the one
    it chooses), and a batch scheduler (a run on the host has no partitions)."""
    placement = job.get("placement")
    if not isinstance(placement, dict):
        return []
    out, seen = [], set()
    for index, candidate in enumerate(placement.get("partitions") or ()):
        name = candidate.get("name") if isinstance(candidate, dict) else None
        if name in seen:
            out.append(DslProblem("job.placement.partitions[%d].name" % index, "names a partition listed before",
                                  name, "list each partition once"))
        seen.add(name)
    opts = job.get("job_options") if isinstance(job.get("job_options"), dict) else {}
    for key in ("queue", "partition"):
        if opts.get(key):
            out.append(DslProblem("job.job_options." + key, "names the partition that job.placement chooses",
                                  opts[key], "leave it out, or list it in job.placement.partitions"))
    if not registry.capable(scheduler, registry.BATCH):
        out.append(DslProblem("job.placement", "chooses a partition, and a run on the host (%s) has none" % scheduler,
                              None, "name a batch scheduler in job.target.job_scheduler_type, or leave placement out"))
    return out


def _optimisation_problems(opt):
    out = []
    base = "job.optimisation"
    app_type = opt.get("app_type")
    sections = [k for k in opt if k.startswith("app_type-")]
    if app_type and "app_type-%s" % app_type not in opt:
        out.append(DslProblem(base + ".app_type-%s" % app_type, "is required because app_type is '%s'" % app_type,
                              hint="add the section that describes the %s application" % app_type))
    for key in sections:
        if app_type and key != "app_type-%s" % app_type:
            out.append(DslProblem(base + "." + key, "does not match app_type '%s'" % app_type,
                                  hint="remove it, or set app_type to '%s'" % key.split("-", 1)[1]))
    section = opt.get("app_type-%s" % app_type) if app_type else None
    if isinstance(section, dict):
        where = "%s.app_type-%s" % (base, app_type)
        if app_type in ("ai_training", "ai_inference"):
            chosen = nested(section, "config", "ai_framework")
            prefix = "ai_framework-"
        else:
            chosen = nested(section, "config", "parallelisation")
            prefix = "parallelisation-"
        for key in section:
            if key.startswith(prefix) and chosen and key != prefix + chosen:
                out.append(DslProblem(where + "." + key, "does not match the chosen %s '%s'" % (prefix[:-1], chosen),
                                      hint="remove it, or choose '%s'" % key[len(prefix):]))
        details = section.get(prefix + chosen) if chosen else None
        if isinstance(details, dict) and "version" in details:
            try:
                VersionRequest(details["version"])
            except ValueError as exc:
                out.append(DslProblem(where + ".%s%s.version" % (prefix, chosen), str(exc), details["version"]))
    build = opt.get("opt_build") or {}
    cpu_type = build.get("cpu_type")
    if cpu_type:
        arch = cpu.CPU_TYPE_ARCH.get(cpu_type)
        for key in ("cpu_isa", "cpu_microarch"):
            value = build.get(key)
            if not value or not isinstance(value, str):
                continue
            value_arch = cpu.arch_of(value)
            if value_arch and value_arch != arch:
                out.append(DslProblem(base + ".opt_build." + key, "is a %s value but cpu_type '%s' is %s"
                                      % (value_arch, cpu_type, arch), value))
    return out
