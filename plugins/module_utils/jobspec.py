# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One scheduler-neutral job: what modak's own jobs (an image build, a staging) ask of a scheduler, rendered by
the site's scheduler class as the application job is (``render(spec, scheduler)``).

A ``JobSpec`` names its steps (argv lists run in order; the job fails at the first step that fails), what the
site's jobs run first (its modules and setup shell, the DSL's target.modules and target.setup), the resources
of one task, the time it may take, where it runs, what it waits for (``after``) and the raw options
for the scheduler (through its allow-list). Nothing here knows a scheduler by its name: the registry's class
writes the directives, and a scheduler that writes none (a run on the host) cannot wait for another job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobOptions, JobScript, Settings
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra, registry

# what a dependency waits for: the other job ended with exit status 0 (ok), ended at all (any), or failed (notok);
# written as the DSL's dependency forms, which each scheduler class translates or refuses
KINDS = {"ok": "afterok", "any": "afterany", "notok": "afternotok"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}\Z")
_JOB_ID = re.compile(r"^[0-9A-Za-z\u0192][0-9A-Za-z._\[\]-]{0,63}\Z")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_WORD = re.compile(r"^[A-Za-z0-9_.@+-]{1,64}\Z")                 # a queue or an account: one plain word
_MODULE = re.compile(r"^[A-Za-z0-9_.+/-]{1,128}\Z")                # as the DSL's target.modules
_OPTION = re.compile(r"^-[A-Za-z0-9-]+([= ][^\x00-\x1f\x7f]{1,200})?\Z")   # one option, on one line


class JobSpecError(ModakError):
    """A job cannot be written as asked."""


@dataclass(frozen=True)
class After:
    """Start only after job ``job_id`` ended: with exit status 0 (``ok``), at all (``any``) or failed (``notok``)."""
    job_id: str
    kind: str = "ok"


@dataclass(frozen=True)
class JobSpec:
    name: str
    steps: Tuple[Tuple[str, ...], ...]
    purpose: str = ""                      # one comment line in the script
    workdir: Optional[str] = None          # None: the directory the job was submitted from
    nodes: int = 1
    tasks: int = 1
    cpus_per_task: int = 1
    walltime_s: Optional[int] = None
    queue: Optional[str] = None
    account: Optional[str] = None
    environment: Tuple[Tuple[str, str], ...] = ()
    after: Tuple[After, ...] = ()
    raw_options: Tuple[str, ...] = ()
    # an array of jobs: each element runs the steps with MODAK_ARRAY_INDEX (from 0) and MODAK_ARRAY_JOB (the id
    # all elements share) exported
    array_size: Optional[int] = None
    exclusive: bool = False                # a node of its own, where the scheduler can say it (else a warning)
    modules: Tuple[str, ...] = ()          # module load, before the steps
    setup: Tuple[str, ...] = ()            # the site's shell, run as given (eval) before the steps


def _check(spec, scheduler):
    problems = []
    if not _NAME.match(spec.name):
        problems.append("name %r: a letter, then letters, digits, '_', '.', '-' (64 at most)" % (spec.name,))
    if not spec.steps or any(not step or not all(isinstance(w, str) and w for w in step) for step in spec.steps):
        problems.append("steps: at least one, each a non-empty argv of non-empty words")
    for count, what in ((spec.nodes, "nodes"), (spec.tasks, "tasks"), (spec.cpus_per_task, "cpus_per_task")):
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 100000:
            problems.append("%s %r: a whole number from 1" % (what, count))
    if spec.walltime_s is not None and (not isinstance(spec.walltime_s, int) or spec.walltime_s < 60):
        problems.append("walltime_s %r: whole seconds, a minute at least" % (spec.walltime_s,))
    for dep in spec.after:
        if dep.kind not in KINDS or not _JOB_ID.match(str(dep.job_id)):
            problems.append("after %r: a job id and one of %s" % (dep, ", ".join(KINDS)))
    if spec.array_size is not None:
        if not isinstance(spec.array_size, int) or isinstance(spec.array_size, bool) \
                or not 1 <= spec.array_size <= 100000:
            problems.append("array_size %r: a whole number from 1" % (spec.array_size,))
        elif not registry.capable(scheduler, registry.ARRAYS):
            problems.append("array_size: %s runs no job arrays" % scheduler)
        elif spec.array_size < registry.scheduler_class(scheduler).array_min_size:
            problems.append("array_size %d: %s runs arrays of %d elements at least" % (
                spec.array_size, scheduler, registry.scheduler_class(scheduler).array_min_size))
    if spec.after and not registry.capable(scheduler, registry.BATCH):
        problems.append("after: %s starts the job at once and cannot wait for job %s (wait for it first)"
                        % (scheduler, spec.after[0].job_id))
    for what, value in (("queue", spec.queue), ("account", spec.account)):
        if value is not None and not _WORD.match(str(value)):
            problems.append("%s %r: one word of letters, digits and '_.@+-'" % (what, value))
    for name, _value in spec.environment:
        if not _VARIABLE.match(name):
            problems.append("environment %r: a shell variable name" % (name,))
    for module in spec.modules:
        if not isinstance(module, str) or not _MODULE.match(module):
            problems.append("module %r: letters, digits and '_.+/-'" % (module,))
    for text in spec.setup:
        if not isinstance(text, str) or "\x00" in text:
            problems.append("setup %r: shell text" % (text,))
    for option in spec.raw_options:
        one_line = ("is not one option on one line", "write '--name=value' or '-x value'")
        found = extra.problem(scheduler, option) if _OPTION.match(option) else one_line
        if found:
            problems.append("raw option %r %s (%s)" % (option, found[0], found[1]))
    if problems:
        raise JobSpecError("job %r cannot be written for %s: %s" % (spec.name, scheduler, "; ".join(problems)))


def render(spec, scheduler):
    """The JobScript of ``spec`` for ``scheduler`` (a registry name or alias), and the scheduler's warnings."""
    scheduler = registry.canonical(scheduler)
    _check(spec, scheduler)
    backend = registry.get(scheduler)
    exclusive = spec.exclusive and backend.exclusive_nodes
    options = JobOptions(job_name=spec.name, walltime_s=spec.walltime_s, nodes=spec.nodes, tasks=spec.tasks,
                         cpus_per_task=spec.cpus_per_task, queue=spec.queue, account=spec.account,
                         dependency=tuple("%s:%s" % (KINDS[d.kind], d.job_id) for d in spec.after),
                         extra_directives=tuple(spec.raw_options), exclusive=exclusive,
                         array=backend.array_range(spec.array_size) if spec.array_size else None)
    settings = Settings(nodes=spec.nodes, tasks_per_node=None, ranks=spec.tasks, threads=spec.cpus_per_task,
                        launcher="none", env=tuple(spec.environment), cpus_per_task=spec.cpus_per_task,
                        tasks=spec.tasks)
    try:
        directives, warnings = backend.preamble(options, settings)
    except DslInvalid as exc:
        raise JobSpecError("job %r cannot be written for %s: %s" % (
            spec.name, scheduler, "; ".join("%s (%s)" % (p.message, p.hint) if p.hint else p.message
                                            for p in exc.problems)))
    if spec.exclusive and not exclusive:
        warnings = list(warnings) + ["%s cannot give job %s nodes of its own portably: it may share them (name "
                                     "the site's resource for it in raw_options)" % (scheduler, spec.name)]
    body = ["# generated by sodalite.modak: %s" % (spec.purpose or spec.name), "set -euo pipefail"]
    body.extend(backend.redirect_lines(options))
    body.extend(["cd %s" % shell.quote(spec.workdir)] if spec.workdir else backend.workdir_lines())
    if spec.array_size:
        body.extend(['MODAK_ARRAY_INDEX="%s"' % backend.array_index_expr,
                     'MODAK_ARRAY_JOB="%s"' % backend.array_job_expr, "export MODAK_ARRAY_INDEX MODAK_ARRAY_JOB"])
    if spec.modules:
        body.append("module load %s" % shell.join(spec.modules))
    body.extend(shell.eval_lines("target.setup", spec.setup))
    body.extend("export %s=%s" % (name, shell.quote(value)) for name, value in spec.environment)
    body.extend(shell.join(backend.run_prefix(options) + list(step)) for step in spec.steps)
    return JobScript(scheduler=scheduler, filename=spec.name + backend.extension, directives=tuple(directives),
                     body=tuple(body)), list(warnings)
