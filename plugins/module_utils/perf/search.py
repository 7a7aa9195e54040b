# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choosing a configuration: the search space from the DSL, rules, model ranking, autotuning, advice.

* ``space``: the product of the values the DSL's ``optimisation.tuning`` allows for each knob;
  unlisted knobs keep their default.
* ``rules``: what to do without measurements on the target's hardware class: threads = free cores,
  bf16 only where the CPU has AMX, compiler off, oneDNN on.
* ``rank``: candidates ordered by predicted time per sample, with a 90 % interval.
* ``autotune``: sequential model-based search: start from the default and its one-knob neighbours,
  then benchmark the untried configuration with the largest expected improvement, refit, and stop when
  the expected improvement of another run no longer pays for it (or the budget, a third of the space
  by default, is spent).
* ``advise``: the pure function the pipeline calls: request + image + records -> advice.
"""

from __future__ import annotations

import itertools
import math

from ansible_collections.sodalite.modak.plugins.module_utils import cpu
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor as perf_model
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store

AUTOTUNE_HOWTO = ("ansible-playbook playbooks/autotune.yml -e dsl_file=<this DSL> -e results_store=<store> "
                  "on a node of the target partition, then optimise with results_store=<store>")
MIN_RECORDS = 6
MIN_CONFIGS = 3
DEFAULT_BATCH = 64
EPOCH_SAMPLES = 60000

# knob -> how it reaches the program (the argument convention of benchmarks/workload/mnist_cnn.py)
ARG_DOC = {
    "threads": "environment OMP_NUM_THREADS=N (and --threads N)",
    "batch_size": "--batch-size N",
    "precision": "--precision fp32|bf16",
    "compile": "--compile when true",
    "channels_last": "--channels-last when true",
    "onednn": "--onednn on|off",
}


def default_config(request=None, host=None):
    """What runs when nothing is tuned: framework defaults (threads = all cores, batch 64, fp32, eager)."""
    threads = None
    if host and host.get("cores"):
        threads = int(host["cores"])
    elif request is not None:
        threads = request.app.threads
    opt = request.opt if request is not None else None
    return store.normalise_config({
        "threads": threads or 1, "batch_size": DEFAULT_BATCH, "precision": "fp32", "channels_last": False,
        "compile": bool(opt is not None and "inductor" in opt.compilers), "onednn": True})


def space(tuning, base):
    """All configurations the tuning dict allows; knobs it does not list keep the base value."""
    tuning = dict(tuning or {})
    base = store.normalise_config(base)
    names = [k for k in store.KNOBS if tuning.get(k)]
    values = [list(tuning[k]) for k in names]
    out, seen = [], set()
    for combo in itertools.product(*values):
        config = dict(base)
        config.update(zip(names, combo))
        config = store.normalise_config(config)
        key = store.config_key(config)
        if key not in seen:
            seen.add(key)
            out.append(config)
    return out or [base]


def _nearest(allowed, wanted):
    allowed = sorted(set(allowed))
    below = [v for v in allowed if v <= wanted]
    return below[-1] if below else allowed[0]


def free_cores(host):
    cores = int((host or {}).get("usable_cores") or (host or {}).get("cores") or 1)
    load = float((host or {}).get("foreign_load") or 0.0)
    return max(1, cores - int(round(load)))


def rules(candidates, base, host=None, features=()):
    """The rule-of-thumb choice among candidates (no measurements needed)."""
    flags = set((host or {}).get("flags") or ()) | set(features or ())
    want = dict(store.normalise_config(base))
    notes = []
    if host:
        want["threads"] = free_cores(host)
        notes.append("threads = free cores (%d)" % want["threads"])
    want["precision"] = "bf16" if "amx_bf16" in flags else "fp32"
    notes.append("bf16 %s (AMX %s)" % ("on" if want["precision"] == "bf16" else "off",
                                       "present" if "amx_bf16" in flags else "absent"))
    want["compile"] = False
    want["onednn"] = True
    want["channels_last"] = False
    choice = dict(candidates[0])
    for knob in store.KNOBS:
        allowed = [c[knob] for c in candidates]
        if knob in ("threads", "batch_size"):
            choice[knob] = _nearest(allowed, want[knob])
        else:
            choice[knob] = want[knob] if want[knob] in allowed else allowed[0]
    key = store.config_key(choice)
    for config in candidates:           # keep a combination that is really in the space
        if store.config_key(config) == key:
            return config, notes
    return candidates[0], notes


def rank(fitted, candidates, load=0.0):
    """[{config, key, predicted_s, low_s, high_s, sd_log}] best first."""
    out = []
    for config in candidates:
        value, low, high = fitted.interval(config, load)
        out.append({"config": config, "key": store.config_key(config), "predicted_s": value,
                    "low_s": low, "high_s": high, "sd_log": fitted.predict(config, load)[1]})
    out.sort(key=lambda row: row["predicted_s"])
    return out


def expected_improvement(mean_log, sd_log, best_log):
    """E[max(0, best - Y)] for Y ~ N(mean, sd) in log time: the expected fractional saving."""
    if sd_log <= 0:
        return max(0.0, best_log - mean_log)
    z = (best_log - mean_log) / sd_log
    pdf = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2)))
    return (best_log - mean_log) * cdf + sd_log * pdf


def should_stop(best_gain, runs, max_runs, min_gain, untried):
    """The stopping rule: (stop?, reason)."""
    if untried <= 0:
        return True, "every allowed configuration was measured"
    if runs >= max_runs:
        return True, "run budget spent (%d runs)" % runs
    if best_gain < min_gain:
        return True, "another run is not expected to pay (best expected gain %.1f %% < %.1f %%)" % (
            100 * best_gain, 100 * min_gain)
    return False, "best expected gain %.1f %%" % (100 * best_gain)


def initial_design(candidates, base):
    """The default and its one-knob-changed neighbours that lie in the space."""
    base = store.normalise_config(base)
    keys = set(store.config_key(c) for c in candidates)
    design = []
    start = base if store.config_key(base) in keys else candidates[0]
    design.append(start)
    for knob in store.KNOBS:
        for value in sorted(set(c[knob] for c in candidates), key=str):
            if value == start[knob]:
                continue
            neighbour = dict(start)
            neighbour[knob] = value
            if store.config_key(neighbour) in keys:
                design.append(store.normalise_config(neighbour))
    return design


def autotune(candidates, measure, base, records=(), load=None, max_runs=None, min_gain=0.02,
             run_cost_s=None, job_s=None, hw_class=None):
    """Sequential model-based search. ``measure(config) -> record`` runs one benchmark.

    ``load`` is the foreign load to rank at (None: the median load seen during the search).
    Returns {choice, runs, load, history, steps, stop_reason, model}. ``min_gain`` is the smallest expected
    fractional improvement worth one more run; with ``run_cost_s`` and ``job_s`` (benchmark run cost and
    the production run it serves) the threshold is raised to run_cost_s / job_s.
    """
    if max_runs is None:
        max_runs = max(len(initial_design(candidates, base)) + 1, int(math.ceil(len(candidates) / 2.0)))
    if run_cost_s and job_s:
        min_gain = max(min_gain, float(run_cost_s) / float(job_s))
    history = list(records)
    new = []
    steps = []
    for config in initial_design(candidates, base):
        if len(new) >= max_runs:
            break
        tried = set(store.config_key(r["config"]) for r in history if store.valid(r))
        if store.config_key(config) in tried:
            continue
        record = measure(config)
        history.append(record)
        new.append(record)
        steps.append({"phase": "initial", "key": store.config_key(config)})
    fitted = None
    reason = ""
    at = load
    while True:
        if load is None:   # rank at the foreign load this machine shows (threads = free cores)
            at = perf_model._median([store.foreign_load(r) for r in new]) if new else 0.0
        own = [r for r in history if store.valid(r)
               and (hw_class is None or store.hardware_class(r.get("hardware")) == hw_class)]
        fitted = perf_model.fit(own, "loglinear", hw_class)
        tried = set(store.config_key(r["config"]) for r in own)
        untried = [c for c in candidates if store.config_key(c) not in tried]
        best_log = min(math.log(fitted.predict(c, at)[0]) for c in candidates if store.config_key(c) in tried)
        scored = []
        for config in untried:
            mean, sd = fitted.predict(config, at, epistemic=True)
            scored.append((expected_improvement(math.log(mean), sd, best_log), config))
        scored.sort(key=lambda item: -item[0])
        gain = scored[0][0] if scored else 0.0
        stop, reason = should_stop(gain, len(new), max_runs, min_gain, len(untried))
        if stop:
            break
        record = measure(scored[0][1])
        history.append(record)
        new.append(record)
        steps.append({"phase": "model", "key": store.config_key(scored[0][1]), "expected_gain": gain})
    measured = [c for c in candidates if store.config_key(c) in
                set(store.config_key(r["config"]) for r in history if store.valid(r))]
    ranked = rank(fitted, measured, at)
    return {"choice": ranked[0]["config"], "predicted_s": ranked[0]["predicted_s"], "runs": len(new), "load": at,
            "history": history, "new_records": new, "steps": steps, "stop_reason": reason, "model": fitted,
            "max_runs": max_runs, "min_gain": min_gain}


def arguments(config, knobs):
    """Program arguments for the tuned knobs (threads travel as OMP_NUM_THREADS)."""
    argv = []
    if "batch_size" in knobs:
        argv.extend(["--batch-size", str(config["batch_size"])])
    if "precision" in knobs:
        argv.extend(["--precision", config["precision"]])
    if "compile" in knobs and config["compile"]:
        argv.append("--compile")
    if "channels_last" in knobs and config["channels_last"]:
        argv.append("--channels-last")
    if "onednn" in knobs:
        argv.extend(["--onednn", "on" if config["onednn"] else "off"])
    return argv


def advise(request, image, records, host=None):
    """Best configuration inside the DSL's search space, its predicted time and speedup over the default.

    ``request`` is the JobRequest (its ``opt.tuning`` is the space), ``image`` the chosen Image or None,
    ``records`` benchmark records (any hardware class), ``host`` the target's CPU facts
    ({model, arch, cores, usable_cores, flags, foreign_load}) or None. Returns None when the DSL lets
    nothing vary, else a plain dict.
    """
    opt = request.opt
    tuning = dict(opt.tuning) if opt is not None and opt.tuning else {}
    if not tuning:
        return None
    base = default_config(request, host)
    candidates = space(tuning, base)
    if host and (host.get("usable_cores") or host.get("cores")):
        limit = int(host.get("usable_cores") or host.get("cores"))
        fitting = [c for c in candidates if c["threads"] <= limit]
        candidates = fitting or candidates
    features = ()
    if opt is not None:
        features = cpu.profile(opt.cpu_type, opt.cpu_isa, opt.cpu_microarch, opt.cpu_features).features
    if image is not None and "bf16" in tuning.get("precision", ()) and image.cpu_features:
        features = set(features) | set(image.cpu_features)
    load = float((host or {}).get("foreign_load") or 0.0)
    hw_class = store.hardware_class(host) if host else None
    application = store.application_key(request.app.argv)
    # the model is kept per hardware class and per application: other programs' runs say nothing about this one
    own = [r for r in (records or []) if store.valid(r) and hw_class is not None
           and store.hardware_class(r.get("hardware")) == hw_class and store.record_application(r) == application]
    skipped = sum(1 for r in (records or []) if not store.valid(r) and store.problems(r))
    n_configs = len(set(store.config_key(r["config"]) for r in own))
    advice = {"hw_class": hw_class, "application": application, "records": len(own), "configs_measured": n_configs,
              "load": load, "default": base, "candidates": len(candidates), "knobs": sorted(tuning),
              "skipped_records": skipped}
    if perf_model.HAS_SKLEARN and len(own) >= MIN_RECORDS and n_configs >= MIN_CONFIGS:
        fitted = perf_model.fit(own, "loglinear", hw_class)
        ranked = rank(fitted, candidates, load)
        best = ranked[0]
        default_s = fitted.predict(base, load)[0]
        advice.update({
            "source": "model", "config": best["config"], "predicted_s_per_sample": best["predicted_s"],
            "interval_s_per_sample": [best["low_s"], best["high_s"]],
            "default_predicted_s_per_sample": default_s,
            "speedup_vs_default": default_s / best["predicted_s"],
            "ranking": [{"key": row["key"], "predicted_s": row["predicted_s"], "low_s": row["low_s"],
                         "high_s": row["high_s"]} for row in ranked[:10]],
            "notes": ["performance model (%d runs of %d configurations on %s) picks %s: predicted %.3g s/sample, "
                      "%.2fx the default" % (len(own), n_configs, hw_class, best["key"], best["predicted_s"],
                                             default_s / best["predicted_s"])]})
    else:
        config, notes = rules(candidates, base, host, features)
        why = ("no benchmark records of %s for this hardware class" % (application or "this application")
               if not own else
               "too few benchmark records (%d runs, %d configurations)" % (len(own), n_configs))
        advice.update({"source": "rules", "config": config, "predicted_s_per_sample": None,
                       "interval_s_per_sample": None, "default_predicted_s_per_sample": None,
                       "speedup_vs_default": None, "ranking": [],
                       "notes": ["%s: rules chose %s (%s)" % (why, store.config_key(config), "; ".join(notes))]})
        if opt is not None and opt.enable_autotuning:
            how = ("enable_autotuning is set but the results store holds %s for hardware class %s, so nothing was "
                   "tuned; produce them with: %s" % (
                       "no benchmark records" if not own else "too few benchmark records (%d runs, %d "
                       "configurations; %d and %d are needed)" % (len(own), n_configs, MIN_RECORDS, MIN_CONFIGS),
                       hw_class or "unknown (no results_store given)", AUTOTUNE_HOWTO))
            advice["notes"].append(how)
            advice["warnings"] = [how]
    if skipped:
        said = ("skipped %d invalid record(s) of the results store (non-finite or out-of-range values, wrong types)"
                % skipped)
        advice["notes"].append(said)
        advice.setdefault("warnings", []).append(said)
    config = advice["config"]
    if advice["predicted_s_per_sample"] is not None:
        advice["predicted_epoch_s"] = advice["predicted_s_per_sample"] * EPOCH_SAMPLES
    advice["env"] = [["OMP_NUM_THREADS", str(config["threads"])]]
    advice["args"] = arguments(config, tuning)
    return advice
