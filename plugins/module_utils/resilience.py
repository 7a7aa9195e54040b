# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Long training that outlives its time limit, a preemption or a lost node (``job.resilience``).

The section is named after what it buys, not after one of its parts: a checkpoint alone does not bring a job back,
a requeue alone restarts it from zero. The scheduler class writes its directives (``resilience_directives``: Slurm
``--signal=B:USR1@T --requeue --open-mode=append``, PBS and Grid Engine ``-r y``) and says how its job requeues
itself (``requeue_line``) and counts its restarts (``restart_count_var``); this module holds the DSL's rules, the
request's values, the program's variables and the batch script's lines around the launch:

- the launch runs in the background and the script waits for it;
- on the scheduler's lead-time signal (``limit_signal``, the batch shell's alone) or on TERM (preemption,
  cancellation) the script forwards the program's signal to every rank (``forward_line``: Slurm signals the
  job's steps, whose tasks are the ranks or the per-node launchers), then waits for the checkpoint;
- after the lead-time signal it requeues the job while restarts remain and the segments' time together is below
  total_training_time, and says so in the job's output.

Which signal reaches the program: torchrun and accelerate (one per node) handle TERM, INT, HUP and QUIT and pass
them to their workers, but die on USR1; srun per rank passes any. The default is TERM for the per-node launchers
and USR1 otherwise.
"""

from __future__ import annotations

import math

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry as launchers
from ansible_collections.sodalite.modak.plugins.module_utils.model import Resilience
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

BASE = "job.resilience"
EVENTS = ("time_limit", "preemption", "node_failure")
CAPABILITY = {"time_limit": registry.LIMIT_SIGNAL, "preemption": registry.REQUEUE, "node_failure": registry.REQUEUE}
DEFAULT_LEAD_S = 300
DEFAULT_RESTARTS = 3
PER_NODE_SIGNALS = ("TERM", "INT", "HUP", "QUIT")    # what torchrun's agent handles and passes to its workers
CHECKPOINT_VAR, RESTART_VAR, MAX_VAR = "MODAK_CHECKPOINT_DIR", "MODAK_RESTART_COUNT", "MODAK_MAX_RESTARTS"
STARTS_FILE = ".modak-starts"          # restarts counted in the checkpoint directory (no scheduler variable)
TRAINED_FILE = ".modak-trained-s"      # the segments' seconds together (total_training_time)


def _reader(duration):
    """``duration`` (dsl_values.walltime_seconds, passed in by the DSL's readers) that gives None for a value it
    cannot read (the schema or the wall time's own rule reports it)."""
    def seconds(value):
        if value is None:
            return None
        try:
            return duration(value)
        except (TypeError, ValueError):
            return None
    return seconds


def _launcher(job, scheduler):
    """The launcher that starts the program: the DSL's, or the one ``auto`` (or the old distributed_launch) gives a
    distributed training (srun per rank where the scheduler has srun's steps, else torchrun per node or
    standalone)."""
    app = job.get("application") if isinstance(job.get("application"), dict) else {}
    launcher = app.get("launcher") or "auto"
    opt = job.get("optimisation") if isinstance(job.get("optimisation"), dict) else {}
    section = opt.get("app_type-ai_training") if isinstance(opt.get("app_type-ai_training"), dict) else {}
    config = section.get("config") if isinstance(section.get("config"), dict) else {}
    if launcher != "auto" or config.get("distributed_training") is not True:
        return launcher
    old = config.get("distributed_launch") or "auto"
    if old != "auto":
        return old
    return "srun" if registry.capable(scheduler, registry.SRUN_STEPS) else "torchrun"


def problems(doc, scheduler, duration):
    """The section's rules by path: a scheduler that cannot requeue, an event it cannot requeue on, a lead time not
    shorter than the wall time, a total that needs a wall time and more restarts, a signal the launcher kills on."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    section = job.get("resilience")
    if not isinstance(section, dict):
        return []
    opts = job.get("job_options") if isinstance(job.get("job_options"), dict) else {}
    _seconds = _reader(duration)
    out = []
    if not registry.capable(scheduler, registry.REQUEUE):
        return [DslProblem(BASE, "%s cannot requeue a job" % scheduler, scheduler,
                           "use a batch scheduler that requeues (%s), or leave resilience out and resubmit"
                           % ", ".join(d.name for d in registry.SCHEDULERS if registry.REQUEUE in d.capabilities))]
    written = registry.scheduler_class(scheduler).resilience_options
    for index, directive in enumerate(opts.get("extra_directives") or ()):
        if isinstance(directive, str) and directive.split("=", 1)[0].split(" ", 1)[0] in written:
            out.append(DslProblem("job.job_options.extra_directives[%d]" % index, "is written by job.resilience",
                                  directive, "remove it: the resilience section writes %s" % ", ".join(written)))
    for index, event in enumerate(section.get("requeue_on") or ()):
        if event in CAPABILITY and not registry.capable(scheduler, CAPABILITY[event]):
            out.append(DslProblem("%s.requeue_on[%d]" % (BASE, index), "%s cannot requeue a job on %s"
                                  % (scheduler, event), event, "it signals no job before its limit: leave %s out "
                                  "(the job stops at its limit)" % event))
    wall = _seconds(opts.get("wall_time_limit"))
    lead = _seconds(section.get("signal_lead_time"))
    if "signal_lead_time" in section and not registry.capable(scheduler, registry.LIMIT_SIGNAL):
        out.append(DslProblem(BASE + ".signal_lead_time", "%s signals no job before its limit" % scheduler,
                              section["signal_lead_time"], "leave it out: the program gets TERM at the limit"))
    elif lead is not None and wall is not None and lead >= wall:
        out.append(DslProblem(BASE + ".signal_lead_time", "must be shorter than wall_time_limit (%d s)" % wall,
                              section["signal_lead_time"], "give the checkpoint a few minutes of the job's time"))
    total = _seconds(section.get("total_training_time"))
    if total is not None:
        if wall is None:
            out.append(DslProblem(BASE + ".total_training_time", "needs job.job_options.wall_time_limit (the time "
                                  "of one job)", section["total_training_time"], "set wall_time_limit"))
        elif not registry.capable(scheduler, registry.LIMIT_SIGNAL) and total > wall:
            out.append(DslProblem(BASE + ".total_training_time", "is longer than one job, and %s requeues no job at "
                                  "its limit" % scheduler, section["total_training_time"],
                                  "keep it within wall_time_limit, or resubmit"))
        elif "max_restarts" in section and total > wall * (section["max_restarts"] + 1):
            out.append(DslProblem(BASE + ".max_restarts", "%d restart(s) of %d s cannot reach total_training_time "
                                  "(%d s)" % (section["max_restarts"], wall, total), section["max_restarts"],
                                  "raise it to %d, or leave it out" % (math.ceil(total / float(wall)) - 1)))
        elif "requeue_on" in section and "time_limit" not in section["requeue_on"] and total > wall:
            out.append(DslProblem(BASE + ".requeue_on", "leaves out time_limit, and total_training_time is longer "
                                  "than one job", section["requeue_on"], "add time_limit"))
    signal = section.get("signal")
    launcher = _launcher(job, scheduler)
    if signal and launcher in launchers.PER_NODE and signal not in PER_NODE_SIGNALS:
        out.append(DslProblem(BASE + ".signal", "%s dies on %s instead of passing it to its workers"
                              % (launcher, signal), signal, "use TERM (the default for %s)" % launcher))
    return out


def read(section, options, scheduler, duration):
    """The request's Resilience (defaults applied) and the notes that say them; None without the section."""
    if section is None:
        return None, []
    _seconds = _reader(duration)
    notes = []
    wall = options.walltime_s
    lead = _seconds(section.get("signal_lead_time"))
    if lead is None and registry.capable(scheduler, registry.LIMIT_SIGNAL):
        lead = min(DEFAULT_LEAD_S, wall // 2) if wall else DEFAULT_LEAD_S
    events = tuple(section.get("requeue_on") or (e for e in EVENTS if registry.capable(scheduler, CAPABILITY[e])))
    total = _seconds(section.get("total_training_time"))
    restarts = section.get("max_restarts")
    if restarts is None:
        restarts = max(0, int(math.ceil(total / float(wall))) - 1) if total and wall else DEFAULT_RESTARTS
    directory = section.get("checkpoint_dir") or "checkpoints/%s" % options.job_name
    res = Resilience(signal=section.get("signal"), lead_s=lead, requeue_on=events, max_restarts=restarts,
                     checkpoint_dir=directory, total_s=total)
    said = "resilience: requeued on %s, %d restart(s) at most" % (", ".join(events), restarts)
    if total:
        said += ("; the training may take %d s in all, %d s per job: the job requeues itself at its limit while "
                 "restarts remain and the segments' time together is below the total" % (total, wall))
    notes.append(said + "; checkpoints in %s ($%s), the restart count in $%s"
                 % (directory, CHECKPOINT_VAR, RESTART_VAR))
    return res, notes


def program_signal(res, settings):
    """The signal the program gets: the section's, else TERM under a per-node launcher (torchrun, accelerate)."""
    if res.signal:
        return res.signal
    plan = settings.distributed
    per_node = plan is not None and (plan.launch in launchers.PER_NODE or plan.launch == "standalone")
    return "TERM" if per_node else "USR1"


def environment(res, backend):
    """The program's variables (name, value): the checkpoint directory, its restart count (the scheduler's
    variable, else the count kept in the checkpoint directory), the most restarts."""
    directory = res.checkpoint_dir
    word = directory if directory.startswith("/") else shell.Raw('"$PWD"/%s' % shell.quote(directory))
    if backend.restart_count_var:
        count = shell.Raw('"${%s:-0}"' % backend.restart_count_var)
    else:
        count = shell.Raw('"$(cat "$%s/%s" 2>/dev/null || echo 0)"' % (CHECKPOINT_VAR, STARTS_FILE))
    return [(CHECKPOINT_VAR, word), (RESTART_VAR, count), (MAX_VAR, str(res.max_restarts))]


def run_lines(run, res, backend, signal, via_steps):
    """The launch (a shell command line) in the background, the traps that forward ``signal`` to every rank and
    wait for the checkpoint, then the requeue after the lead-time signal while restarts remain; leaves the launch's
    exit status in MODAK_RC."""
    forward = backend.forward_line(signal) if via_steps and backend.forward_line(signal) else \
        'kill -s %s "$MODAK_LAUNCH" 2>/dev/null || true' % signal
    lines = ["# resilience: the launch runs in the background; a signal makes every rank checkpoint and stop",
             'mkdir -p "$%s"' % CHECKPOINT_VAR]
    if not backend.restart_count_var:
        lines.append('echo "$((%s + 1))" >"$%s/%s"' % (RESTART_VAR, CHECKPOINT_VAR, STARTS_FILE))
    lines += ["MODAK_STOP=",
              "# shellcheck disable=SC2329  # the traps call it",
              "modak_stop() {  # $1: why the job stops (limit, or term: preemption, cancellation)",
              '  MODAK_STOP="$1"',
              '  echo "modak: $1 signal: forwarding %s to the ranks, waiting for the checkpoint" >&2' % signal,
              "  %s" % forward,
              "}"]
    if backend.limit_signal and backend.limit_signal != "TERM":
        lines.append("trap 'modak_stop limit' %s" % backend.limit_signal)
    lines += ["trap 'modak_stop term' TERM",
              "%s &" % run,
              "MODAK_LAUNCH=$!",
              "# a trapped signal ends a wait early: wait again until the launch has ended, then take its status",
              'while kill -0 "$MODAK_LAUNCH" 2>/dev/null; do wait "$MODAK_LAUNCH" || true; done',
              'wait "$MODAK_LAUNCH" && MODAK_RC=0 || MODAK_RC=$?',
              '[ -z "$MODAK_STOP" ] || echo "modak: the launch ended with status $MODAK_RC after the $MODAK_STOP signal"'
              ' >&2']
    causes = []
    if "time_limit" in res.requeue_on and backend.requeue_line:
        causes.append('[ "$MODAK_STOP" = limit ] && MODAK_WHY="the time limit"')
    if "preemption" in res.requeue_on and backend.requeue_line and backend.preempted_test:
        # a job that ends by itself within the preemption's grace time is not requeued by the scheduler; Slurm
        # signals the steps alone then, so the launch may end without the batch shell seeing a signal
        causes.append('[ "$MODAK_STOP" != limit ] && %s && MODAK_WHY="a preemption"' % backend.preempted_test)
    if causes:
        lines.append("MODAK_WHY=")
        lines += ["%s || true" % cause for cause in causes]
        condition = ['[ -n "$MODAK_WHY" ]', '[ "$%s" -lt "$%s" ]' % (RESTART_VAR, MAX_VAR)]
        if res.total_s:
            lines += ['MODAK_TRAINED=$(( $(cat "$%s/%s" 2>/dev/null || echo 0) + SECONDS ))'
                      % (CHECKPOINT_VAR, TRAINED_FILE),
                      'echo "$MODAK_TRAINED" >"$%s/%s"' % (CHECKPOINT_VAR, TRAINED_FILE)]
            condition.append('[ "$MODAK_TRAINED" -lt %d ]' % res.total_s)
        lines += ["if %s; then" % " && ".join(condition),
                  '  echo "modak: requeued after $MODAK_WHY: restart $((%s + 1)) of $%s" >&2' % (RESTART_VAR, MAX_VAR),
                  "  %s" % backend.requeue_line,
                  "fi"]
    return lines
