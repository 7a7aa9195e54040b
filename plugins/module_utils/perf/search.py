# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choosing a configuration: the search space from the DSL, rules, model ranking, autotuning, advice.

* ``space``: the product of the values the DSL's ``optimisation.tuning`` allows for each knob;
  unlisted knobs keep their default.
* ``rules``: what to do without measurements on the target's hardware class: threads = free cores,
  compiler off (compile only where measured), oneDNN on; on a CPU bf16 only where it has AMX; on GPUs bf16 where
  they have it (compute capability 8.0 on), and for convolutional models channels-last with it and cuDNN autotuning.
* ``rank``: candidates ordered by predicted time per sample, with a 90 % interval.
* ``autotune``: sequential model-based search: start from the default, the rules' choice and its one-knob
  neighbours, then benchmark the untried configuration with the largest expected improvement, refit, and stop when
  the expected improvement of another run no longer pays for it (or the budget, a third of the space
  by default, is spent).
* ``advise``: the pure function the pipeline calls: request + image + records -> advice.
"""

from __future__ import annotations

import itertools
import math

from ansible_collections.sodalite.modak.plugins.module_utils import cpu
from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor as perf_model
from ansible_collections.sodalite.modak.plugins.module_utils.perf import stats, store, workload

AUTOTUNE_HOWTO = ("ansible-playbook playbooks/autotune.yml -e dsl_file=<this DSL> -e results_store=<store> "
                  "on a node of the target partition, then optimise with results_store=<store>")
MIN_RECORDS = 6
MIN_CONFIGS = 3
# never slower than the default: a tuned choice is kept only when its repeated runs beat the default's, where the
# job runs, by more than the noise measured there (Welch's one-sided test on log time, 95 %, Student's t quantile)
MIN_REPEATS = 2
NOISE_FLOOR = 0.03   # sd of log time assumed at least (two runs of each can agree by chance)
CONFIRM_PHASE = "confirm"
DEFAULT_BATCH = 64

# model kinds (app_type-ai_*.config.type) whose layers are convolutions: channels-last and cuDNN autotuning apply
CONVOLUTIONAL_KINDS = ("cnn", "convnet", "convolutional", "resnet", "unet")


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
        "compile": bool(opt is not None and "inductor" in opt.compilers), "onednn": True, "cudnn_benchmark": False})


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


def convolutional(model_kind):
    """Whether a DSL's model kind (app_type-ai_*.config.type) names a convolutional network."""
    return isinstance(model_kind, str) and model_kind.strip().lower() in CONVOLUTIONAL_KINDS


def rules(candidates, base, host=None, features=(), conv=False):
    """The rule-of-thumb choice among candidates (no measurements needed); ``conv``: the model is convolutional."""
    flags = set((host or {}).get("flags") or ()) | set(features or ())
    want = dict(store.normalise_config(base))
    notes = []
    if host:
        want["threads"] = free_cores(host)
        notes.append("threads = free cores (%d)" % want["threads"])
    if (host or {}).get("gpus"):
        gpu = hardware.gpu_class(host)
        bf16 = hardware.bf16_gpu(host)
        want["precision"] = "bf16" if bf16 else "fp32"
        notes.append("bf16 %s (%s: compute capability %s 8.0)" % ("on" if bf16 else "off", gpu,
                                                                  ">=" if bf16 else "<"))
        want["channels_last"] = bool(bf16 and conv)
        want["cudnn_benchmark"] = bool(conv)
        notes.append("channels-last %s, cuDNN autotuning %s (%s)" % (
            "on" if want["channels_last"] else "off", "on" if conv else "off",
            "convolutions" if conv else "no convolutional model kind named"))
    else:
        want["precision"] = "bf16" if "amx_bf16" in flags else "fp32"
        notes.append("bf16 %s (AMX %s)" % ("on" if want["precision"] == "bf16" else "off",
                                           "present" if "amx_bf16" in flags else "absent"))
        want["channels_last"] = False
        want["cudnn_benchmark"] = False
    want["compile"] = False
    notes.append("compiler off (compile only where measured)")
    want["onednn"] = True
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


def should_stop(best_gain, runs, max_runs, min_gain, untried):
    """The stopping rule: (stop?, reason)."""
    if untried <= 0:
        return True, "every allowed configuration was measured"
    if runs >= max_runs:
        return True, "run budget spent (%d configurations measured)" % runs
    if best_gain < min_gain:
        return True, "another run is not expected to pay (best expected gain %.1f %% < %.1f %%)" % (
            100 * best_gain, 100 * min_gain)
    return False, "best expected gain %.1f %%" % (100 * best_gain)


def initial_design(candidates, base, start=None):
    """The default, then ``start`` (the rules' choice) and the one-knob-changed neighbours of ``start`` (of the
    default when none) that lie in the space."""
    base = store.normalise_config(base)
    keys = set(store.config_key(c) for c in candidates)
    design = []
    first = base if store.config_key(base) in keys else candidates[0]
    design.append(first)
    start = store.normalise_config(start) if start is not None else None
    if start is None or store.config_key(start) not in keys:
        start = first
    elif store.config_key(start) != store.config_key(first):
        design.append(start)
    for knob in store.KNOBS:
        for value in sorted(set(c[knob] for c in candidates), key=str):
            if value == start[knob]:
                continue
            neighbour = dict(start)
            neighbour[knob] = value
            if store.config_key(neighbour) in keys and store.config_key(neighbour) != store.config_key(first):
                design.append(store.normalise_config(neighbour))
    return design


def default_budget(candidates):
    """Configurations autotune measures unless told: a third of the space (at least 2: the default and one more)."""
    return min(len(candidates), max(2, len(candidates) // 3))


def autotune(candidates, measure, base, records=(), load=None, max_runs=None, min_gain=0.02,
             run_cost_s=None, job_s=None, hw_class=None, start=None):
    """Sequential model-based search. ``measure(config) -> record`` runs one benchmark.

    ``load`` is the foreign load to rank at (None: the median load seen during the search).
    Returns {choice, runs, load, history, steps, stop_reason, model}. ``min_gain`` is the smallest expected
    fractional improvement worth one more run; with ``run_cost_s`` and ``job_s`` (benchmark run cost and
    the production run it serves) the threshold is raised to run_cost_s / job_s. ``measure`` may return a
    list of records (repeated runs of the configuration); ``max_runs`` counts configurations measured (default: a
    third of the space); ``start``: the rules' choice, measured right after the default with its neighbours.
    """
    if max_runs is None:
        max_runs = default_budget(candidates)
    if run_cost_s and job_s:
        min_gain = max(min_gain, float(run_cost_s) / float(job_s))
    history = list(records)
    new = []
    steps = []

    def run(config):
        got = measure(config)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        history.extend(got)
        new.extend(got)
        return got

    for config in initial_design(candidates, base, start):
        if len(steps) >= max_runs:
            break
        tried = set(store.config_key(r["config"]) for r in history if store.valid(r))
        if store.config_key(config) in tried:
            continue
        run(config)
        steps.append({"phase": "initial", "key": store.config_key(config)})
    fitted = None
    reason = ""
    at = load
    while True:
        if load is None:   # rank at the foreign load this machine shows (threads = free cores)
            at = stats.median([store.foreign_load(r) for r in new]) if new else 0.0
        own = [r for r in history if store.valid(r)
               and (hw_class is None or store.hardware_class(r.get("hardware")) == hw_class)]
        fitted = perf_model.fit(own, "loglinear", hw_class)
        tried = set(store.config_key(r["config"]) for r in own)
        untried = [c for c in candidates if store.config_key(c) not in tried]
        best_log = min(math.log(fitted.predict(c, at)[0]) for c in candidates if store.config_key(c) in tried)
        scored = []
        for config in untried:
            mean, sd = fitted.predict(config, at, epistemic=True)
            scored.append((stats.expected_improvement(math.log(mean), sd, best_log), config))
        scored.sort(key=lambda item: -item[0])
        gain = scored[0][0] if scored else 0.0
        stop, reason = should_stop(gain, len(steps), max_runs, min_gain, len(untried))
        if stop:
            break
        run(scored[0][1])
        steps.append({"phase": "model", "key": store.config_key(scored[0][1]), "expected_gain": gain})
    measured = [c for c in candidates if store.config_key(c) in
                set(store.config_key(r["config"]) for r in history if store.valid(r))]
    ranked = rank(fitted, measured, at)
    return {"choice": ranked[0]["config"], "predicted_s": ranked[0]["predicted_s"], "runs": len(new),
            "configs_run": len(steps), "load": at,
            "history": history, "new_records": new, "steps": steps, "stop_reason": reason, "model": fitted,
            "max_runs": max_runs, "min_gain": min_gain}


def context_of(record):
    """Where a record was measured: the image its run went through (None: no container)."""
    context = record.get("context") if isinstance(record, dict) else None
    image = context.get("image") if isinstance(context, dict) else None
    return image if isinstance(image, str) and image else None


def _log_times(records, config):
    rows = perf_model.by_config(records).get(store.config_key(config), ())
    return [math.log(float(r["timing"]["per_sample_s"])) for r in rows]


def decide(records, choice, default, confirmed=None):
    """Keep ``choice`` only when its measured runs beat the default's by more than the noise: (keep, why, numbers).

    ``records`` are the runs where the job runs (one hardware class, application and image); ``confirmed`` the
    runs of interleaved confirmation rounds among them (the two alternated, so a drift of the machine falls on both
    alike; default: every record of ``phase`` CONFIRM_PHASE). When both configurations have MIN_REPEATS confirmed
    runs, only those count; otherwise all their runs do. The gain is the difference of the mean log times; it must
    exceed Student's t quantile (Welch-Satterthwaite degrees of freedom) times its standard error, each
    configuration's sd taken at least NOISE_FLOOR."""
    choice, default = store.normalise_config(choice), store.normalise_config(default)
    if store.config_key(choice) == store.config_key(default):
        return True, "the best configuration is the framework default", {}
    if confirmed is None:
        confirmed = [r for r in records if r.get("phase") == CONFIRM_PHASE]
    mine, base = _log_times(confirmed, choice), _log_times(confirmed, default)
    interleaved = len(mine) >= MIN_REPEATS and len(base) >= MIN_REPEATS
    if not interleaved:
        mine, base = _log_times(records, choice), _log_times(records, default)
    numbers = {"choice_runs": len(mine), "default_runs": len(base), "interleaved": interleaved}
    if len(mine) < MIN_REPEATS or len(base) < MIN_REPEATS:
        return False, ("%s was measured %d time(s) and the default %s %d time(s) where the job runs; %d runs of "
                       "each are needed to tell a gain from noise" % (store.config_key(choice), len(mine),
                                                                      store.config_key(default), len(base),
                                                                      MIN_REPEATS)), numbers
    gain, stderr, dof, (var_d, var_c) = stats.welch(base, mine, NOISE_FLOOR)
    threshold = stats.t_quantile(dof) * stderr
    numbers.update(measured_speedup=math.exp(gain), needed_speedup=math.exp(threshold), dof=dof,
                   noise_sd_log=[math.sqrt(var_c), math.sqrt(var_d)])
    runs = "%d and %d %sruns" % (len(mine), len(base), "interleaved " if interleaved else "")
    if gain <= threshold:
        return False, ("%s measured %.2fx the default %s (%s), not more than the noise allows (%.2fx needed at "
                       "run-to-run sds of %.0f %% and %.0f %%)" % (
                           store.config_key(choice), math.exp(gain), store.config_key(default), runs,
                           math.exp(threshold), 100 * math.sqrt(var_c), 100 * math.sqrt(var_d))), numbers
    return True, ("%s measured %.2fx the default %s (%s), above the %.2fx the noise allows" % (
        store.config_key(choice), math.exp(gain), store.config_key(default), runs, math.exp(threshold))), numbers


def advise(request, image, records, host=None, context=None):
    """Best configuration inside the DSL's search space, its predicted time and speedup over the default.

    ``request`` is the JobRequest (its ``opt.tuning`` is the space), ``image`` the chosen Image or None,
    ``records`` benchmark records (any hardware class), ``host`` the target's CPU facts
    ({model, arch, cores, usable_cores, flags, foreign_load}) or None, ``context`` the image reference the job
    runs in (None: no container): only runs measured there count. A choice other than the framework default is
    kept only when its repeated runs beat the default's there by more than the noise (``decide``); otherwise
    the default is kept and the notes say why. Returns None when the DSL lets nothing vary, else a plain dict.
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
    # the model is kept per hardware class, application and image: other programs' runs say nothing about this
    # one, and runs outside the job's image (or in another) say nothing about runs inside it
    mine = [r for r in (records or []) if store.valid(r) and hw_class is not None
            and store.hardware_class(r.get("hardware")) == hw_class and store.record_application(r) == application]
    own = [r for r in mine if context_of(r) == context]
    elsewhere = len(mine) - len(own)
    skipped = sum(1 for r in (records or []) if not store.valid(r) and store.problems(r))
    n_configs = len(set(store.config_key(r["config"]) for r in own))
    advice = {"hw_class": hw_class, "application": application, "context": context, "records": len(own),
              "records_elsewhere": elsewhere, "configs_measured": n_configs, "load": load, "default": base,
              "candidates": len(candidates), "knobs": sorted(tuning), "skipped_records": skipped}
    where = "in %s" % context if context else "without a container"
    if perf_model.HAS_SKLEARN and len(own) >= MIN_RECORDS and n_configs >= MIN_CONFIGS:
        fitted = perf_model.fit(own, "loglinear", hw_class)
        ranked = rank(fitted, candidates, load)
        best = ranked[0]
        keep, why, numbers = decide(own, best["config"], base)
        chosen = best if keep else next((row for row in ranked if row["key"] == store.config_key(base)), None) or \
            dict(zip(("predicted_s", "low_s", "high_s"), fitted.interval(base, load)), config=base,
                 key=store.config_key(base))
        low, high = _interval_with_runs(own, chosen["config"], chosen["low_s"], chosen["high_s"])
        default_s = fitted.predict(base, load)[0]
        advice.update({
            "source": "model", "config": chosen["config"],
            "predicted_s_per_sample": chosen["predicted_s"], "interval_s_per_sample": [low, high],
            "default_predicted_s_per_sample": default_s,
            "speedup_vs_default": default_s / chosen["predicted_s"],
            "model_choice": best["key"], "kept": keep, "decision": why, "decision_numbers": numbers,
            "ranking": [{"key": row["key"], "predicted_s": row["predicted_s"], "low_s": row["low_s"],
                         "high_s": row["high_s"]} for row in ranked[:10]],
            "notes": ["performance model (%d runs of %d configurations on %s, %s) ranks %s first: predicted %.3g "
                      "s/sample, %.2fx the default" % (len(own), n_configs, hw_class, where, best["key"],
                                                       best["predicted_s"], default_s / best["predicted_s"]),
                      ("kept %s: %s" % (best["key"], why)) if keep else
                      ("kept the framework defaults %s: %s" % (store.config_key(base), why))]})
    else:
        config, notes = rules(candidates, base, host, features, convolutional(getattr(opt, "model_kind", None)))
        why = ("no benchmark records of %s %s for this hardware class" % (application or "this application", where)
               if not own else
               "too few benchmark records %s (%d runs, %d configurations)" % (where, len(own), n_configs))
        advice.update({"source": "rules", "config": base, "predicted_s_per_sample": None,
                       "interval_s_per_sample": None, "default_predicted_s_per_sample": None,
                       "speedup_vs_default": None, "ranking": [], "rules_suggestion": config, "kept": False,
                       "decision": "nothing was measured against the default %s" % where,
                       "notes": ["%s: kept the framework defaults %s, since nothing shows another configuration "
                                 "is faster there (the rules would try %s: %s)" % (
                                     why, store.config_key(base), store.config_key(config), "; ".join(notes))]})
        if opt is not None and opt.enable_autotuning:
            how = ("enable_autotuning is set but the results store holds %s for hardware class %s %s, so nothing was "
                   "tuned; produce them with: %s" % (
                       "no benchmark records" if not own else "too few benchmark records (%d runs, %d "
                       "configurations; %d and %d are needed)" % (len(own), n_configs, MIN_RECORDS, MIN_CONFIGS),
                       hw_class or "unknown (no results_store given)", where, AUTOTUNE_HOWTO))
            advice["notes"].append(how)
            advice["warnings"] = [how]
    if elsewhere:
        advice["notes"].append("%d run(s) of this application on this hardware class were measured elsewhere (another "
                               "image, or outside the job's container) and do not count %s" % (elsewhere, where))
    if skipped:
        said = ("skipped %d invalid record(s) of the results store (non-finite or out-of-range values, wrong types)"
                % skipped)
        advice["notes"].append(said)
        advice.setdefault("warnings", []).append(said)
    config = advice["config"]
    if advice["predicted_s_per_sample"] is not None:
        advice["predicted_epoch_s"] = advice["predicted_s_per_sample"] * workload.EPOCH_SAMPLES
    advice["env"] = [["OMP_NUM_THREADS", str(config["threads"])]]
    advice["args"] = workload.arguments(config, tuning)
    return advice


def _interval_with_runs(records, config, low, high):
    """The model's interval, widened to hold every measured run of the configuration (its spread is measured)."""
    runs = [float(r["timing"]["per_sample_s"]) for r in perf_model.by_config(records).get(store.config_key(config), ())]
    return (min([low] + runs), max([high] + runs))
