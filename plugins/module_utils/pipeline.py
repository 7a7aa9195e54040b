# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optimiser on one screen: DSL -> match -> model -> render."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher, render, settings
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.model import Result


def optimise(document, catalog, records=None, host=None, site=None, runner=None):
    """Optimise one DSL document (already parsed into plain data, laid over the Site ``site``) against an
    ImageCatalog.

    ``records`` (benchmark and run records) and ``host`` (the target's CPU facts) feed the performance model
    when the DSL states a tuning search space, and the records the run times of job.placement's partitions;
    ``runner`` (commands.Runner) asks the scheduler when the job would start in each (None: nobody is asked).
    """
    return optimise_request(dsl.parse(document, site), catalog, records, host, runner)   # 1. site, validate once


def optimise_request(request, catalog, records=None, host=None, runner=None):
    """Optimise one parsed JobRequest (dsl.parse) against an ImageCatalog."""
    choice = matcher.choose(request, catalog)            # 2. image, with the reasons
    advice = _advise(request, choice, records, host)     # 3a. performance model
    run = settings.plan(request, choice, advice)         # 3. ranks, threads, launcher, env
    if not request.app.argv and not choice.uri:
        raise DslInvalid([DslProblem("job.application.executable",
                                     "is required when the application runs without a container",
                                     hint="name the program to run, or give a container_runtime")])
    placed = _place(request, choice, run, records, runner)   # 3b. the partition where it finishes first
    if placed:
        request = placed.pop("request")
    script, warnings = render.render(request, choice, run)   # 4. job script
    explanation = list(choice.explanation) + list(run.notes) + list(request.notes) + list((placed or {}).get(
        "notes", ()))
    warnings = list(request.warnings) + list(choice.warnings) + list(run.warnings) + warnings + list(
        (placed or {}).get("warnings", ()))
    extra = dict({"prediction": advice} if advice else {}, stage=render.stage_script(request, choice, run))
    if placed:
        extra["placement"] = placed
    return Result(request=request, choice=choice, settings=run, script=script,
                  explanation=explanation, warnings=warnings + list((advice or {}).get("warnings", ())), extra=extra)


def _place(request, choice, run, records, runner):
    """job.placement's choice, with the request for the chosen partition (the choice loads only then)."""
    if not request.placement:
        return None
    from ansible_collections.sodalite.modak.plugins.module_utils import placement  # pylint: disable=import-outside-toplevel

    def script_for(partition):
        return render.render(placement.with_partition(request, partition), choice, run)[0].text
    placed = placement.choose(request, script_for, run.nodes, records or (), runner)
    placed["request"] = placement.with_partition(request, placed["partition"])
    return placed


def _advise(request, choice, records, host):
    """The performance model's advice when the DSL states a search space (the model loads only then)."""
    if request.opt is None or not request.opt.tuning:
        return None
    from ansible_collections.sodalite.modak.plugins.module_utils.perf import search  # pylint: disable=import-outside-toplevel
    return search.advise(request, choice.image, records or [], host, context=choice.uri)
