# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The original MODAK's forms, read into the canonical DSL first, before the document is validated (once).

A form is rewritten only where its canonical reading is valid; anything else is left as written, for the
validation to name at the path the user wrote. Every rewrite is said in the explanation (a note) or, where the
reading is a guess, as a warning.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Dict, List

from ansible_collections.sodalite.modak.plugins.module_utils import image_refs
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.launchers import registry as launchers
from ansible_collections.sodalite.modak.plugins.module_utils.schema import end_anchored


# the tuners the original named; modak runs its own (sodalite.modak.autotune over optimisation.tuning)
MODAK_TUNER = "modak"
STRING_BOOLEANS = ("true", "false", "True", "False")
TRAINING_LAUNCHES = ("auto",) + launchers.TRAINING_NAMES      # what distributed_launch may say


@dataclasses.dataclass
class Canonical(object):
    """A document in the canonical DSL, what was said about reading it so, and where its renamed keys were."""
    doc: object
    notes: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)
    renamed: Dict[str, str] = dataclasses.field(default_factory=dict)   # canonical path -> the path written

    def where(self, problem):
        """``problem`` at the path the user wrote (a renamed key is named as written)."""
        for path, written in self.renamed.items():
            if problem.path == path or problem.path.startswith(path + "."):
                return DslProblem(written + problem.path[len(path):], problem.message, problem.value, problem.hint,
                                  problem.location)
        return problem


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
            if value in STRING_BOOLEANS and _is_string_boolean(child):
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
    elif (isinstance(runtime, str) and "://" not in runtime and not runtime.endswith((".sif", ".sqsh"))
          and end_anchored(image_refs.REFERENCE).match("docker://" + runtime)):
        app["container_runtime"] = "docker://" + runtime
        warnings.append("container_runtime '%s' names no transport: read as 'docker://%s' (the image is pulled "
                        "from that registry into the image directory when missing; write the full reference, or a "
                        ".sif path, to say what you mean)" % (runtime, runtime))


def _target(target, canonical):
    """queue_type alone is read as job_scheduler_type; with both, dsl_rules compares them."""
    if "queue_type" in target and "job_scheduler_type" not in target:
        kind = target["job_scheduler_type"] = target.pop("queue_type")
        canonical.renamed["job.target.job_scheduler_type"] = "job.target.queue_type"
        canonical.notes.append("target.queue_type '%s' is read as target.job_scheduler_type (the original's "
                               "EXAMPLE.md name)" % (kind,))


def _launcher(job, canonical):
    """A distributed training's ``distributed_launch`` (the old field) is read as ``application.launcher`` (one
    launcher field), unless the application names a launcher too: dsl_rules then compares the two."""
    section = job["optimisation"].get("app_type-ai_training")
    config = section.get("config") if isinstance(section, dict) else None
    app = job.get("application")
    if not (isinstance(config, dict) and config.get("distributed_training") is True and isinstance(app, dict)
            and config.get("distributed_launch") in TRAINING_LAUNCHES):
        return
    if app.get("launcher", "auto") == "auto":
        launch = app["launcher"] = config.pop("distributed_launch")
        canonical.renamed["job.application.launcher"] = \
            "job.optimisation.app_type-ai_training.config.distributed_launch"
        if launch != "auto":
            canonical.notes.append("distributed_launch '%s' is read as application.launcher (the one launcher "
                                   "field; distributed_launch is its old name)" % launch)


def _autotuning(opt, warnings):
    autotuning = opt.get("autotuning")
    tuner = autotuning.get("tuner") if isinstance(autotuning, dict) else None
    if opt.get("enable_autotuning") is not True:
        return
    if tuner and tuner != MODAK_TUNER:
        warnings.append("enable_autotuning asks for the tuner '%s', which modak does not run: modak tunes the "
                        "optimisation.tuning search space with real runs (playbooks/autotune.yml, "
                        "sodalite.modak.autotune); this script runs the untuned settings" % tuner)
    elif not opt.get("tuning"):
        warnings.append("enable_autotuning is set but optimisation.tuning names no search space: nothing is tuned")


def normalise(doc, schema):
    """The Canonical form of a parsed (not yet validated) ``doc``; ``schema`` is the DSL's JSON schema
    (schema.SCHEMA), which says where a boolean is wanted."""
    canonical = Canonical(copy.deepcopy(doc))
    job = canonical.doc.get("job") if isinstance(canonical.doc, dict) else None
    if not isinstance(job, dict):
        return canonical
    _booleans(canonical.doc, schema, "", canonical.notes)
    if isinstance(job.get("target"), dict):
        _target(job["target"], canonical)
    if isinstance(job.get("application"), dict):
        _container_runtime(job["application"], canonical.notes, canonical.warnings)
    if isinstance(job.get("optimisation"), dict):
        _autotuning(job["optimisation"], canonical.warnings)
        _launcher(job, canonical)
    return canonical
