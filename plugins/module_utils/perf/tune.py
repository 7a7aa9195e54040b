# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Autotuning a DSL's application: real runs inside the DSL's ``optimisation.tuning`` search space.

The application follows the argument convention of the schema's tuning description (the benchmark
workload does): the configuration reaches it as ``OMP_NUM_THREADS`` and the flags of ``workload.arguments``
(``--batch-size``, ``--precision``, ...) after its own arguments, and it prints one JSON record
(``timing.per_sample_s``, ``load.other_busy_cores``, ``hardware``) as the last JSON line of its output.
Every run is appended to the results store at once, so an interrupted search keeps what it measured.

Autotuning measures where the job runs: ``run_prefix`` is the command the job script runs the application
under (a container runtime's run command for the chosen image), ``environment`` the variables the job script
sets, and ``image`` the image reference the records are stored with (optimise counts only runs measured in the
image it chooses). Each configuration runs ``repeats`` times, so a gain can be told from noise; when the search
ends on a configuration other than the default, ``confirm`` rounds run the two alternately (default first in
even rounds, the choice first in odd ones, so a drift of the machine falls on both alike), and the decision to
keep the choice is taken on those interleaved runs (``search.decide``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import PerfError
from ansible_collections.sodalite.modak.plugins.module_utils.perf import search, store, workload

PYTHON_NAMES = ("python", "python3")


class TuneError(PerfError):
    """A run of the application failed or printed no record."""


def application_argv(app_argv, config, knobs, interpreter=None, extra_args=(), run_prefix=()):
    """The command line of one run: the run prefix (a container's run command), the DSL's program and arguments,
    extra arguments, then the knobs. The interpreter replaces python only when the run is not in a container."""
    argv = [shell.expanded(word, os.environ) for word in app_argv]   # $NAME expands as in the job script
    if not argv:
        raise TuneError("the DSL names no executable to benchmark (job.application.executable)")
    if interpreter and not run_prefix and os.path.basename(argv[0]) in PYTHON_NAMES:
        argv[0] = interpreter
    return list(run_prefix) + argv + list(extra_args) + workload.arguments(config, knobs)


def parse_record(stdout):
    """The last JSON object line of the output that carries a positive timing.per_sample_s, or None."""
    for line in reversed((stdout or "").splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        value = (record.get("timing") or {}).get("per_sample_s") if isinstance(record, dict) else None
        if isinstance(value, (int, float)) and value > 0 and math.isfinite(value):
            return record
    return None


def run_application(argv, config, cwd=None, timeout=None, env=None, hardware=None):
    """Run the application once with a configuration; returns its record (config = the requested one)."""
    config = store.normalise_config(config)
    run_env = dict(os.environ if env is None else env)
    run_env["OMP_NUM_THREADS"] = str(config["threads"])
    try:
        proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TuneError("%s: %s" % (" ".join(argv), exc)) from exc
    record = parse_record(proc.stdout) if proc.returncode == 0 else None
    if record is None:
        raise TuneError("%s (OMP_NUM_THREADS=%d) %s; its error output ends with: %s" % (
            " ".join(argv), config["threads"],
            "exited with %d" % proc.returncode if proc.returncode
            else "printed no JSON record with timing.per_sample_s",
            (proc.stderr or "")[-1500:]))
    reported = record.get("config")
    if isinstance(reported, dict):
        record["reported_config"] = reported
    record["config"] = config
    if not isinstance(record.get("hardware"), dict) and hardware:
        record["hardware"] = dict((k, v) for k, v in hardware.items() if k != "foreign_load")
    record.setdefault("workload", os.path.basename(argv[1] if len(argv) > 1 else argv[0]))
    record["phase"] = "autotune"
    return record


def candidates_for(request, host):
    """(space, default) of a parsed request on a host: the DSL's space, threads capped at the usable cores."""
    tuning = dict(request.opt.tuning) if request.opt is not None and request.opt.tuning else {}
    base = search.default_config(request, host)
    found = search.space(tuning, base)
    limit = int((host or {}).get("usable_cores") or (host or {}).get("cores") or 0)
    if limit:
        found = [c for c in found if c["threads"] <= limit] or found
    return found, base


def autotune_request(request, store_path, host, interpreter=None, cwd=None, extra_args=(), max_runs=None,
                     min_gain=0.02, timeout=None, log=None, run_prefix=(), environment=None, image=None, repeats=3,
                     confirm=4):
    """Run ``search.autotune`` with real runs of the request's application; records go to the store.

    ``run_prefix``, ``environment`` and ``image``: where the job runs (see the module's doc); ``repeats``: runs of
    each configuration measured; ``max_runs`` counts configurations; ``confirm``: interleaved rounds of the default
    and the search's choice before the decision (fewer than 2: too few interleaved runs to decide on, so the
    decision uses every run of the two, the store's included; confirmation runs of earlier calls count only as
    ordinary runs here, so the decision is this call's)."""
    tuning = dict(request.opt.tuning) if request.opt is not None and request.opt.tuning else {}
    if not tuning:
        raise TuneError("the DSL has no optimisation.tuning search space")
    candidates, base = candidates_for(request, host)
    hw_class = store.hardware_class(host)
    application = store.application_key(request.app.argv)
    existing = []
    if os.path.exists(store_path):
        existing = [r for r in store.load(store_path) if store.valid(r)
                    and store.hardware_class(r.get("hardware")) == hw_class
                    and store.record_application(r) == application and search.context_of(r) == (image or None)]
    run_env = dict(os.environ)
    run_env.update(environment or {})
    repeats = max(1, int(repeats or 1))

    def measure_once(config, phase=None):
        argv = application_argv(request.app.argv, config, tuning, interpreter, extra_args, run_prefix)
        record = run_application(argv, config, cwd, timeout, env=run_env, hardware=host)
        record["application"] = application
        if phase:
            record["phase"] = phase
        record["context"] = {"image": image or None, "environment": sorted((environment or {}).items()),
                             "run_prefix": list(run_prefix)}
        if store.hardware_class(record.get("hardware")) != hw_class:
            raise TuneError("the run reported hardware class %s, this host is %s"
                            % (store.hardware_class(record.get("hardware")), hw_class))
        store.append(store_path, [record])
        if log is not None:
            log.append("%s: %.4g s/sample at foreign load %.2f" % (
                store.config_key(config), record["timing"]["per_sample_s"], store.foreign_load(record)))
        return record

    def measure(config):
        return [measure_once(config) for _repeat in range(repeats)]

    if len(candidates) < 2 and not existing:
        found = measure(candidates[0])
        return {"choice": candidates[0], "runs": len(found), "new_records": found, "steps": [],
                "stop_reason": "the search space holds one configuration", "predicted_s": None, "load": None,
                "max_runs": 1, "min_gain": min_gain, "default": base, "candidates": candidates,
                "hw_class": hw_class, "previous_records": 0, "kept": True, "decision": "one configuration",
                "repeats": repeats, "confirm_runs": 0}
    start, _notes = search.rules(candidates, base, host, (), search.convolutional(request.opt.model_kind))
    result = search.autotune(candidates, measure, base, records=existing, max_runs=max_runs or None,
                             min_gain=min_gain, hw_class=hw_class, start=start)
    if not any(store.config_key(r["config"]) == store.config_key(base) for r in result["history"]):
        result["history"].extend(measure(base))   # the default is what a choice has to beat
    confirmed = []
    if store.config_key(result["choice"]) != store.config_key(base):
        for round_ in range(max(0, int(confirm or 0))):
            for config in ((base, result["choice"]) if round_ % 2 == 0 else (result["choice"], base)):
                confirmed.append(measure_once(config, search.CONFIRM_PHASE))
        result["history"].extend(confirmed)
        result["new_records"].extend(confirmed)
        result["runs"] += len(confirmed)
    keep, why, numbers = search.decide([r for r in result["history"] if store.valid(r)], result["choice"], base,
                                       confirmed=[r for r in confirmed if store.valid(r)])
    result.update({"default": base, "candidates": candidates, "hw_class": hw_class,
                   "previous_records": len(existing), "model_choice": result["choice"], "kept": keep,
                   "decision": why, "decision_numbers": numbers, "repeats": repeats,
                   "confirm_runs": len(confirmed),
                   "choice": result["choice"] if keep else base})
    return result
