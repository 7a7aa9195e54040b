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
- after the lead-time signal, or when the program exits with REQUEUE_EXIT (99: it asks to go on in a new run), it
  requeues the job while restarts remain and the segments' time together is below total_training_time, and says so
  in the job's output; a run that ended well (status 0) is never requeued, even when the signal came as it ended.

A scheduler without a queue (``reruns_itself``: local) has its job's script run the program again in a loop instead
of requeuing, each run with the wall time of a job; its own timer (``run_prefix``) sends the lead-time signal.

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
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import trust
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

BASE = "job.resilience"
EVENTS = ("time_limit", "preemption", "node_failure")
CAPABILITY = {"time_limit": registry.LIMIT_SIGNAL, "preemption": registry.REQUEUE, "node_failure": registry.REQUEUE}
DEFAULT_LEAD_S = 300
DEFAULT_RESTARTS = 3
PER_NODE_SIGNALS = ("TERM", "INT", "HUP", "QUIT")    # what torchrun's agent handles and passes to its workers
MAX_RESTARTS = 1000                      # the schema's maximum of max_restarts; a derived count is capped there too
CHECKPOINT_VAR, RESTART_VAR, MAX_VAR = "MODAK_CHECKPOINT_DIR", "MODAK_RESTART_COUNT", "MODAK_MAX_RESTARTS"
# the exit status by which a program asks for a new run (requeue_on time_limit): Grid Engine's "reschedule" status
REQUEUE_EXIT, REQUEUE_EXIT_VAR = 99, "MODAK_REQUEUE_EXIT"
# the completion marker: the program writes this file (in the checkpoint directory) when its training is done; a
# launch that ends badly after it (torchrun's agent, stopped by the limit signal as its ranks shut down) is not run
# again. The job's first start removes it.
DONE_FILE, DONE_VAR = ".modak-done", "MODAK_DONE_FILE"
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


def supported(scheduler):
    """Whether a scheduler takes job.resilience: it requeues a job, or signals it before its limit (and the job
    requeues itself or runs the program again)."""
    return registry.capable(scheduler, registry.REQUEUE) or registry.capable(scheduler, registry.LIMIT_SIGNAL)


def _requeue_on_problems(section, scheduler):
    """requeue_on's events the scheduler cannot requeue on, and a list the scheduler cannot narrow to: the
    rerunnable mark (Slurm's --requeue, which scontrol requeue needs too; PBS and Grid Engine's -r y) makes the
    scheduler requeue the job after a preemption and after a lost node alike."""
    events = section.get("requeue_on")
    if not isinstance(events, list):
        return []
    out = []
    for index, event in enumerate(events):
        if event in CAPABILITY and not registry.capable(scheduler, CAPABILITY[event]):
            hint = ("it signals no job before its limit: leave %s out (the job stops at its limit)" % event
                    if event == "time_limit" else "nothing puts a %s job back after it: leave %s out"
                    % (scheduler, event))
            out.append(DslProblem("%s.requeue_on[%d]" % (BASE, index), "%s cannot requeue a job on %s"
                                  % (scheduler, event), event, hint))
    rerun = [event for event in EVENTS if CAPABILITY[event] == registry.REQUEUE]
    left_out = [event for event in rerun if event not in events]
    if registry.capable(scheduler, registry.REQUEUE) and not out and left_out:
        out.append(DslProblem(BASE + ".requeue_on", "leaves out %s, but %s requeues a job marked rerunnable after "
                              "%s alike" % (" and ".join(left_out), scheduler, " and ".join(rerun)), events,
                              "list %s (the default): %s cannot requeue on one and not on the other%s"
                              % (" and ".join(rerun), scheduler, ", nor on time_limit alone"
                                 if registry.capable(scheduler, registry.LIMIT_SIGNAL) else "")))
    return out


def problems(doc, scheduler, duration):
    """The section's rules by path: a scheduler that cannot requeue, an event it cannot requeue on (or not apart
    from another), a lead time not shorter than the wall time (or with no wall time where the job is its own timer),
    a total that needs a wall time and more restarts, a signal the launcher kills on."""
    job = doc.get("job") if isinstance(doc.get("job"), dict) else {}
    section = job.get("resilience")
    if not isinstance(section, dict):
        return []
    opts = job.get("job_options") if isinstance(job.get("job_options"), dict) else {}
    _seconds = _reader(duration)
    out = []
    if not supported(scheduler):
        return [DslProblem(BASE, "%s cannot requeue a job" % scheduler, scheduler,
                           "use a scheduler that requeues or restarts one (%s), or leave resilience out and resubmit"
                           % ", ".join(d.name for d in registry.SCHEDULERS if supported(d.name)))]
    backend = registry.scheduler_class(scheduler)
    written = backend.resilience_options
    for index, directive in enumerate(opts.get("extra_directives") or ()):
        if isinstance(directive, str) and directive.split("=", 1)[0].split(" ", 1)[0] in written:
            out.append(DslProblem("job.job_options.extra_directives[%d]" % index, "is written by job.resilience",
                                  directive, "remove it: the resilience section writes %s" % ", ".join(written)))
    out.extend(_requeue_on_problems(section, scheduler))
    wall = _seconds(opts.get("wall_time_limit"))
    lead = _seconds(section.get("signal_lead_time"))
    if "signal_lead_time" in section and not registry.capable(scheduler, registry.LIMIT_SIGNAL):
        out.append(DslProblem(BASE + ".signal_lead_time", "%s signals no job before its limit" % scheduler,
                              section["signal_lead_time"], "leave it out: the program gets TERM at the limit"))
    elif "signal_lead_time" in section and backend.reruns_itself and opts.get("wall_time_limit") is None:
        out.append(DslProblem(BASE + ".signal_lead_time", "needs job.job_options.wall_time_limit: a %s job has no "
                              "other limit to signal before" % scheduler, section["signal_lead_time"],
                              "set wall_time_limit (the time of each run), or leave signal_lead_time out"))
    elif lead is not None and wall is not None and lead >= wall:
        out.append(DslProblem(BASE + ".signal_lead_time", "must be shorter than wall_time_limit (%d s)" % wall,
                              section["signal_lead_time"], "give the checkpoint a few minutes of the job's time"))
    total = _seconds(section.get("total_training_time"))
    if total is not None:
        if not wall:        # none, or zero: no job time to divide the total by
            out.append(DslProblem(BASE + ".total_training_time", "needs job.job_options.wall_time_limit above zero "
                                  "(the time of one job)", section["total_training_time"], "set wall_time_limit"))
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
        if restarts > MAX_RESTARTS:     # as the schema bounds a given max_restarts
            notes.append("resilience: total_training_time would take %d restarts of %d s; at most %d (the job "
                         "stops after them)" % (restarts, wall, MAX_RESTARTS))
            restarts = MAX_RESTARTS
    directory = section.get("checkpoint_dir") or "checkpoints/%s" % options.job_name
    res = Resilience(signal=section.get("signal"), lead_s=lead, requeue_on=events, max_restarts=restarts,
                     checkpoint_dir=directory, total_s=total)
    if registry.scheduler_class(scheduler).reruns_itself:
        said = ("resilience: the job's script runs the program again (no queue to requeue it in) on %s or its exit "
                "status %d, %d restart(s) at most" % (", ".join(events), REQUEUE_EXIT, restarts))
    else:
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


def _again(res, backend):
    """Whether the job starts the program again itself (after the limit signal, or on REQUEUE_EXIT): requeue_on
    names time_limit and the scheduler lets the job requeue itself, or the job's script runs it again."""
    return "time_limit" in res.requeue_on and bool(backend.requeue_line or backend.reruns_itself)


def counted(name):
    """A shell word that reads the count kept in the checkpoint directory's file ``name``: its digits only (at most
    15, read as decimal), else 0. What a file holds never reaches arithmetic unfiltered: bash evaluates ``$(...)``
    inside an array subscript of ``$(( ))``, so a file holding ``x[$(cmd)]`` would run cmd as the job's user."""
    path = '"$%s/%s"' % (CHECKPOINT_VAR, name)
    # (no case pattern: its ')' inside a $(( )) made bash read the whole as a command substitution)
    return ('$(MODAK_N=; if [ -f %s ] && [ ! -L %s ]; then MODAK_N="$(head -c 16 %s 2>/dev/null)"; fi; '
            '[[ "$MODAK_N" =~ ^[0-9]{1,15}$ ]] || MODAK_N=0; echo "$((10#$MODAK_N))")' % (path, path, path))


def kept_lines(value, name):
    """Lines that keep ``value`` (a shell word) as the count in the checkpoint directory's file ``name``: written
    under a name of the job's own and renamed over it, so that nothing planted at the name (a link, a FIFO) is
    written through or blocks the job."""
    path = '"$%s/%s"' % (CHECKPOINT_VAR, name)
    part = '"$%s/%s.$$"' % (CHECKPOINT_VAR, name)
    return ['echo %s >%s && mv -f %s %s' % (value, part, part, path)]


def private_dir_lines(variable):
    """Lines that make ``$variable``'s directory, resolve it once (``cd -P``) and stop the job unless it and every
    directory above it pass the trust model of the images (runtimes/trust.py: the user's or root's, written by
    others only with the sticky bit or as a trusted group; an ACL judged by its entries), and make one it made
    private (0700). A directory another user
    made first in a shared work directory held the model the job writes, and a checkpoint planted there is code for
    ``torch.load``."""
    var = '"$%s"' % variable
    return ['if [ -e %s ] || [ -L %s ]; then MODAK_MADE=; else MODAK_MADE=1; fi' % (var, var),
            'mkdir -p -- %s' % var] + trust.resolve_functions() + [
        'if MODAK_RESOLVED="$(cd -P -- %s 2>/dev/null && pwd -P)"; then %s="$MODAK_RESOLVED"; fi' % (var, variable),
        'MODAK_UNTRUSTED="$(modak_untrusted %s before-fetch || echo "$%s (not checked)")"' % (var, variable),
        'if [ -n "$MODAK_UNTRUSTED" ]; then',
        '  echo "modak: the checkpoint directory $%s is not this user'"'"'s own, or others may change it or a '
        'directory above it ($MODAK_UNTRUSTED): not run (set job.resilience.checkpoint_dir to a directory of your '
        'own)" >&2' % variable,
        "  exit 1",
        "fi",
        # one the job made is private; one the user made keeps what a group they trust may do, not what others may
        'if [ -z "$MODAK_MADE" ]; then chmod o-rwx -- %s; else chmod 0700 -- %s; fi' % (var, var)]


def environment(res, backend):
    """The program's variables (name, value): the checkpoint directory, its restart count (the scheduler's
    variable; 0 where the job's script counts the runs itself; else the count kept in the checkpoint directory),
    the most restarts, and the exit status that asks for a new run where the job starts one itself."""
    directory = res.checkpoint_dir
    word = directory if directory.startswith("/") else shell.Raw('"$PWD"/%s' % shell.quote(directory))
    if backend.restart_count_var:
        count = shell.Raw('"${%s:-0}"' % backend.restart_count_var)
    elif backend.reruns_itself:
        count = "0"
    else:
        count = shell.Raw('"%s"' % counted(STARTS_FILE))
    out = [(CHECKPOINT_VAR, word), (RESTART_VAR, count), (MAX_VAR, str(res.max_restarts)),
           (DONE_VAR, shell.Raw('"$%s"/%s' % (CHECKPOINT_VAR, DONE_FILE)))]
    if _again(res, backend):
        out.append((REQUEUE_EXIT_VAR, str(REQUEUE_EXIT)))
    return out


def run_lines(run, res, backend, signal, via_steps, options=None, notes=()):
    """The launch (a shell command line, after ``notes``: its shellcheck directives) in the background, the traps
    that forward ``signal`` to every rank and wait for the checkpoint, then the requeue after the lead-time signal
    or on REQUEUE_EXIT while restarts remain; a scheduler without a queue (``reruns_itself``) runs the launch again
    in a loop instead, each run's time counted from zero (SECONDS, as a requeued job's). Leaves the launch's exit
    status in MODAK_RC."""
    forward = backend.forward_line(signal) if via_steps and backend.forward_line(signal) else \
        'kill -s %s "$MODAK_LAUNCH" 2>/dev/null || true' % signal
    loop = backend.reruns_itself
    lines = ["# resilience: the launch runs in the background; a signal makes every rank checkpoint and stop",
             "MODAK_STOP=",
             "# shellcheck disable=SC2329  # the traps call it",
             "modak_stop() {  # $1: why the job stops (limit, or term: preemption, cancellation)",
             '  MODAK_STOP="$1"',
             '  echo "modak: $1 signal: forwarding %s to the ranks, waiting for the checkpoint" >&2' % signal,
             "  %s" % forward,
             "}"]
    if backend.limit_signal and backend.limit_signal != "TERM":
        lines.append("trap 'modak_stop limit' %s" % backend.limit_signal)
    lines.append("trap 'modak_stop term' TERM")
    # the traps first (a signal now stops the job cleanly), then the checkpoint directory
    lines += private_dir_lines(CHECKPOINT_VAR)
    lines.append('[ "$%s" -ne 0 ] || rm -f -- "$%s/%s"  # the first start: no training is done yet'
                 % (RESTART_VAR, CHECKPOINT_VAR, DONE_FILE))
    if not backend.restart_count_var and not loop:
        lines += kept_lines('"$((%s + 1))"' % RESTART_VAR, STARTS_FILE)
    body = []
    if loop:
        body += ['[ "$MODAK_STOP" != term ] || break  # cancelled between two runs',
                 "SECONDS=0  # this run's time, as a job's"]
    body += list(notes) + ["%s &" % run,
                           "MODAK_LAUNCH=$!",
                           "# a trapped signal ends a wait early: wait again until the launch has ended, then take its "
                           "status",
                           'while kill -0 "$MODAK_LAUNCH" 2>/dev/null; do wait "$MODAK_LAUNCH" || true; done',
                           'wait "$MODAK_LAUNCH" && MODAK_RC=0 || MODAK_RC=$?']
    if loop and options is not None:
        body += backend.limit_lines(options, res.lead_s)
    body.append('[ -z "$MODAK_STOP" ] || echo "modak: the launch ended with status $MODAK_RC after the $MODAK_STOP '
                'signal" >&2')
    body += _requeue_lines(res, backend)
    if loop:
        lines += ["while :; do  # %s has no queue: the job runs the program again itself" % backend.name]
        lines += ["  " + line for line in body + ["break"]]
        lines.append("done")
    else:
        lines += body
    return lines


def _requeue_lines(res, backend):
    """Why the job goes on (the limit signal, a preemption, the program's REQUEUE_EXIT) and, while restarts remain,
    the time together is below the total and the launch did not end well, the requeue (or, in a loop, the next
    run)."""
    causes = []
    if _again(res, backend):
        causes.append('[ "$MODAK_STOP" = limit ] && MODAK_WHY="the time limit"')
        causes.append('[ -z "$MODAK_STOP" ] && [ "$MODAK_RC" -eq %d ] && MODAK_WHY="exit status %d"'
                      % (REQUEUE_EXIT, REQUEUE_EXIT))
    if "preemption" in res.requeue_on and backend.requeue_line and backend.preempted_test:
        # a job that ends by itself within the preemption's grace time is not requeued by the scheduler; Slurm
        # signals the steps alone then, so the launch may end without the batch shell seeing a signal
        causes.append('[ "$MODAK_STOP" != limit ] && %s && MODAK_WHY="a preemption"' % backend.preempted_test)
    if not causes:
        return []
    lines = ["MODAK_WHY="] + ["%s || true" % cause for cause in causes]
    # the program's completion marker decides: a launcher's status is not the program's
    lines += ['if [ "$MODAK_RC" -ne 0 ] && [ -e "$%s/%s" ]; then' % (CHECKPOINT_VAR, DONE_FILE),
              '  echo "modak: the program wrote its completion marker ($%s): the training is done, not run again '
              '(the launch ended with status $MODAK_RC)" >&2' % DONE_VAR,
              "  MODAK_RC=0",
              "fi"]
    # a run that ended well is done, even when the signal came as it ended
    condition = ['[ -n "$MODAK_WHY" ]', '[ "$MODAK_RC" -ne 0 ]', '[ "$%s" -lt "$%s" ]' % (RESTART_VAR, MAX_VAR)]
    if res.total_s:
        lines += ['MODAK_TRAINED="%s"' % counted(TRAINED_FILE),
                  "MODAK_TRAINED=$((MODAK_TRAINED + SECONDS))"] + kept_lines('"$MODAK_TRAINED"', TRAINED_FILE)
        condition.append('[ "$MODAK_TRAINED" -lt %d ]' % res.total_s)
    lines.append("if %s; then" % " && ".join(condition))
    if backend.reruns_itself:
        lines += ['  echo "modak: running the program again after $MODAK_WHY: restart $((%s + 1)) of $%s" >&2'
                  % (RESTART_VAR, MAX_VAR),
                  "  %s=$((%s + 1))" % (RESTART_VAR, RESTART_VAR)]
        lines += ["  %s" % line for line in backend.restart_record_lines(RESTART_VAR)]
        lines += ["  MODAK_STOP=",
                  "  continue"]
    else:
        lines += ['  echo "modak: requeued after $MODAK_WHY: restart $((%s + 1)) of $%s" >&2' % (RESTART_VAR, MAX_VAR),
                  "  %s" % backend.requeue_line]
    lines += ['elif [ -n "$MODAK_WHY" ] && [ "$MODAK_RC" -ne 0 ]; then',
              '  echo "modak: not run again after $MODAK_WHY: %s" >&2' % (
                  "max_restarts ($%s) reached" % MAX_VAR if not res.total_s else
                  '$([ "$%s" -lt "$%s" ] && echo "total_training_time (%d s) reached" || echo "max_restarts ($%s) '
                  'reached")' % (RESTART_VAR, MAX_VAR, res.total_s, MAX_VAR)),
              "fi"]
    return lines
