# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The original MODAK's forms, read into the canonical DSL before the request is built.

Validation (the schema) has already accepted each form; here it is rewritten, and every rewrite is
said in the explanation (a note) or, where the reading is a guess, as a warning.
"""

from __future__ import annotations

import copy


# the tuners the original named; modak runs its own (sodalite.modak.autotune over optimisation.tuning)
MODAK_TUNER = "modak"


def _is_string_boolean(sub):
    types = sub.get("type")
    return isinstance(types, list) and "boolean" in types and str(sub.get("pattern", "")).startswith("^(true|false")


def _booleans(node, sub, path, notes):
    """'true'/'false' strings where the schema wants a boolean -> True/False, walking the schema."""
    if not isinstance(sub, dict):
        return
    if isinstance(node, dict):
        props = sub.get("properties", {})
        extra = sub.get("additionalProperties")
        for key in list(node):
            child = props.get(key, extra if isinstance(extra, dict) else None)
            if child is None:
                continue
            value = node[key]
            if isinstance(value, str) and _is_string_boolean(child):
                node[key] = value.lower() == "true"
                notes.append("%s%s: the string '%s' is read as the boolean %s (write %s)"
                             % (path, key, value, str(node[key]).lower(), str(node[key]).lower()))
            else:
                _booleans(value, child, "%s%s." % (path, key), notes)
    elif isinstance(node, list) and isinstance(sub.get("items"), dict):
        for index, item in enumerate(node):
            _booleans(item, sub["items"], "%s[%d]." % (path.rstrip("."), index), notes)


def _container_runtime(app, notes, warnings):
    runtime = app.get("container_runtime")
    if runtime == "":
        notes.append("container_runtime '' means no container: the application runs in the job's own environment "
                     "(target.setup, modules, a venv or conda env it activates)")
    elif isinstance(runtime, str) and "://" not in runtime and not runtime.endswith((".sif", ".sqsh")):
        app["container_runtime"] = "docker://" + runtime
        warnings.append("container_runtime '%s' names no transport: read as 'docker://%s' (the image is pulled "
                        "from that registry into the image directory when missing; write the full reference, or a "
                        ".sif path, to say what you mean)" % (runtime, runtime))


def _target(target, notes):
    if "queue_type" in target:
        kind = target.pop("queue_type")
        if "job_scheduler_type" not in target:
            target["job_scheduler_type"] = kind
            notes.append("target.queue_type '%s' is read as target.job_scheduler_type (the original's "
                         "EXAMPLE.md name)" % kind)


def _autotuning(opt, warnings):
    tuner = (opt.get("autotuning") or {}).get("tuner")
    if not opt.get("enable_autotuning"):
        return
    if tuner and tuner != MODAK_TUNER:
        warnings.append("enable_autotuning asks for the tuner '%s', which modak does not run: modak tunes the "
                        "optimisation.tuning search space with real runs (playbooks/autotune.yml, "
                        "sodalite.modak.autotune); this script runs the untuned settings" % tuner)
    elif not opt.get("tuning"):
        warnings.append("enable_autotuning is set but optimisation.tuning names no search space: nothing is tuned")


def normalise(doc, schema):
    """Return (a canonical copy of the validated ``doc``, notes, warnings); ``schema`` is the DSL's JSON schema
    (schema.SCHEMA), which says where a boolean is wanted."""
    doc = copy.deepcopy(doc)
    notes, warnings = [], []
    _booleans(doc, schema, "", notes)
    job = doc["job"]
    if isinstance(job.get("target"), dict):
        _target(job["target"], notes)
    if isinstance(job.get("application"), dict):
        _container_runtime(job["application"], notes, warnings)
    if isinstance(job.get("optimisation"), dict):
        _autotuning(job["optimisation"], warnings)
    return doc, notes, warnings
