# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where to run (job.placement): the candidate partition where the job is predicted to finish first.

For each candidate the scheduler says, without submitting, whether the job fits and when it would start
(``Scheduler.start_estimate``, the registry's START_ESTIMATE capability: Slurm's sbatch --test-only with the job's
own script, so with exactly its resources); a scheduler that cannot tell, or cannot be asked here, counts from now
and the explanation says so. The run time comes from the runs of the application recorded there (perf/runtime.py:
a level per partition or hardware class, a node-scaling term, a 90 % interval); without any, the wall time limit
stands in as an upper bound. The earliest predicted finish wins (ties: the order of the DSL); the explanation gives
the choice and every runner-up with its start, run time and finish. No candidate fits: DslInvalid, by path.

The only command is the scheduler's estimate, one per candidate, all of them within DEADLINE_S.
"""

from __future__ import annotations

import dataclasses
import time

from ansible_collections.sodalite.modak.plugins.module_utils.errors import CommandError, DslInvalid, DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.perf import runtime, store
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

DEADLINE_S = 30.0     # every start estimate of one placement together
PATH = "job.placement.partitions"


def at(seconds):
    """Local time of seconds since the epoch, as sbatch writes it: '2026-01-02T03:04:05'."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(round(seconds)))


def with_partition(request, partition):
    """The request with ``partition`` as its queue."""
    return dataclasses.replace(request, options=dataclasses.replace(request.options, queue=partition))


def _starts(request, script_for, runner, clock, now, deadline_s):
    """[(fits, start_in_s, where the start comes from, the scheduler's words)] per candidate, and warnings; the
    deadline counts from ``now``."""
    scheduler = request.target.scheduler
    title = registry.descriptor(scheduler).title
    if not registry.capable(scheduler, registry.START_ESTIMATE):
        return [(None, 0.0, "now: %s cannot tell when a job would start" % title, "")
                for _c in request.placement], []
    if runner is None:
        return [(None, 0.0, "now: %s was not asked (no scheduler at hand here)" % title, "")
                for _c in request.placement], []
    backend = registry.scheduler_class(scheduler)(runner)
    out, warnings = [], []
    for candidate in request.placement:
        remaining = deadline_s - (clock() - now)
        if remaining < 1:
            out.append((None, 0.0, "now: no time left to ask %s (%d s for every partition)" % (title, deadline_s),
                        ""))
            continue
        saved = runner.timeout
        runner.timeout = min(saved, remaining)
        try:
            estimate = backend.start_estimate(script_for(candidate.partition))
        except CommandError as exc:
            said = str(exc)
            warnings.append("placement: %s could not be asked when the job would start in %s (%s); counted from "
                            "now" % (title, candidate.partition, said))
            out.append((None, 0.0, "now: %s could not be asked" % title, said))
            continue
        finally:
            runner.timeout = saved
        if not estimate.fits:
            out.append((False, None, "", estimate.said))
        elif estimate.start is None:
            out.append((True, 0.0, "now: %s named no start" % title, estimate.said))
        else:
            out.append((True, max(0.0, estimate.start - now), "%s's estimate" % title, estimate.said))
    return out, warnings


def _run_times(request, records, nodes):
    """[(run_s, low, high, where it comes from)] per candidate."""
    application = store.application_key(request.app.argv)
    keys = [("class", c.hw_class) if c.hw_class else ("partition", c.partition) for c in request.placement]
    groups = {}
    for candidate, key in zip(request.placement, keys):
        runs = runtime.group_runs(records, application, candidate.partition, candidate.hw_class)
        if runs:
            groups[key] = runs
    model = runtime.fit(groups)
    out = []
    for candidate, key in zip(request.placement, keys):
        predicted = model.predict(key, nodes)
        if predicted is not None:
            where = "of hardware class %s" % candidate.hw_class if candidate.hw_class else \
                "on partition %s" % candidate.partition
            out.append(predicted + (runtime.describe(model, key, nodes, where),))
        elif request.options.walltime_s:
            out.append((float(request.options.walltime_s), None, None,
                        "no recorded runs of %s there: the wall time limit, an upper bound" % (application or "it")))
        else:
            out.append((None, None, None, "no recorded runs of %s there and no wall time limit" % (
                application or "it")))
    return out


def _seconds(value):
    return "%.0f s" % value if value is not None else "unknown"


def _interval(low, high):
    return " (90 %%: %.0f-%.0f s)" % (low, high) if low is not None else ""


def _phrase(row):
    """'fast: finishes in 70 s at 07:32:10 (90 %: 66-75 s); starts in 60 s (Slurm's estimate), runs 10 s ...'."""
    if row["finish_in_s"] is None:
        finish = "finish unknown"
    else:
        low, high = row["finish_interval_s"] or (None, None)
        finish = "finishes in %s at %s%s" % (_seconds(row["finish_in_s"]), row["finish"], _interval(low, high))
    low, high = row["run_interval_s"] or (None, None)
    return "%s: %s; starts %s (%s), runs %s%s (%s)" % (
        row["partition"], finish, "now" if not row["start_in_s"] else "in %s at %s" % (
            _seconds(row["start_in_s"]), row["start"]), row["start_from"], _seconds(row["run_s"]),
        _interval(low, high), row["run_from"])


def choose(request, script_for, nodes, records=(), runner=None, clock=time.time, deadline_s=DEADLINE_S):
    """The placement of ``request`` (its job.placement candidates): a dict with the chosen ``partition``,
    ``candidates`` (one row each, in the DSL's order: fits, start, run time and finish with their intervals, where
    each comes from), ``notes`` for the explanation and ``warnings``.

    ``script_for(partition)`` is the job script written for a partition, ``nodes`` the job's node count,
    ``records`` the results store's records, ``runner`` the commands.Runner that asks the scheduler (None: nobody
    is asked, every start is now), ``clock`` the time in seconds since the epoch."""
    now = clock()
    starts, warnings = _starts(request, script_for, runner, clock, now, deadline_s)
    runs = _run_times(request, records, nodes)
    rows = []
    for candidate, (fits, start_in, start_from, said), (run_s, low, high, run_from) in zip(
            request.placement, starts, runs):
        row = {"partition": candidate.partition, "hardware_class": candidate.hw_class, "fits": fits, "said": said,
               "start_in_s": start_in, "start": at(now + start_in) if start_in is not None else None,
               "start_from": start_from, "run_s": run_s, "run_interval_s": [low, high] if low is not None else None,
               "run_from": run_from, "finish_in_s": None, "finish": None, "finish_interval_s": None}
        if fits is not False and run_s is not None:
            row.update(finish_in_s=start_in + run_s, finish=at(now + start_in + run_s),
                       finish_interval_s=[start_in + low, start_in + high] if low is not None else None)
        rows.append(row)
    title = registry.descriptor(request.target.scheduler).title
    fitting = [(index, row) for index, row in enumerate(rows) if row["fits"] is not False]
    if not fitting:
        raise DslInvalid([DslProblem("%s[%d].name" % (PATH, index), "%s refuses the job in this partition: %s" % (
            title, row["said"] or "no reason given"), row["partition"],
            "ask for what the partition has (nodes, cores, memory, time limit), or list another partition")
            for index, row in enumerate(rows)])
    ranked = sorted(fitting, key=lambda item: (item[1]["finish_in_s"] is None,
                                               item[1]["finish_in_s"] if item[1]["finish_in_s"] is not None
                                               else item[1]["start_in_s"], item[0]))
    chosen = ranked[0][1]
    by = "the earliest predicted finish" if chosen["finish_in_s"] is not None else \
        "the earliest start (no run time is known anywhere)"
    notes = ["placement: partition %s, by %s; %s" % (chosen["partition"], by, _phrase(chosen))]
    notes.extend("placement runner-up %s" % _phrase(row) for _index, row in ranked[1:])
    notes.extend("placement: partition %s cannot run the job: %s" % (row["partition"], row["said"])
                 for row in rows if row["fits"] is False)
    if request.options.queue and request.options.queue != chosen["partition"]:
        notes.append("placement: partition %s replaces %s" % (chosen["partition"], request.options.queue))
    return {"partition": chosen["partition"], "decided_at": at(now), "decided_at_s": now, "nodes": nodes,
            "application": store.application_key(request.app.argv), "candidates": rows, "notes": notes,
            "warnings": warnings}
