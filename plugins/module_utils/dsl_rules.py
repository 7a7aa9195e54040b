# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DSL rules a JSON Schema cannot state: key types, bash's own variables, raw directives, real dates, numbers.

Each function takes a part of the parsed document and returns DslProblems with their paths.
"""

from __future__ import annotations

import datetime
import math
import re

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtime_registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra, registry

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
# bash refuses to assign these (`readonly -p` of bash 5): the script would stop at the export
BASH_READONLY = frozenset(("BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"))
# bash computes these itself: an assignment is ignored or changes their meaning, never reaches the program
BASH_DYNAMIC = frozenset(("BASHPID", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_COMMAND", "BASH_LINENO",
                          "BASH_SOURCE", "BASH_SUBSHELL", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "FUNCNAME",
                          "GROUPS", "HISTCMD", "LINENO", "RANDOM", "SECONDS", "SRANDOM"))
_DEFER = ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S")


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
    """The program word: bash runs a first word starting with '%' as 'fg', even quoted or after 'command'."""
    where = "job.application.executable" if words.get("executable") else "job.application.arguments"
    first = (words.get("executable") or []) + (words.get("arguments") or [])
    if first and first[0].startswith("%"):
        return [DslProblem(where, "the program name starts with '%', which bash reads as a job (fg)", first[0],
                           "name the program by its path, e.g. ./%s" % first[0])]
    return []
