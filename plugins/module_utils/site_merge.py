# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A DSL document laid over a site profile (site_profile.Site), once, before the document is read (dsl.py).

The profile's ``target``, ``job_options`` and ``application`` are the defaults of ``job.<section>``: the DSL's
values win field by field (mappings merged, lists and scalars replaced). The preset ``application.fabric`` names
is laid under the application's ``environment`` and ``environment_expanded``, so that its variables reach the job
script as the application's own do, and a variable the application sets itself wins. Each value taken from the
profile is remembered, so that a problem the DSL's checks find in it names the profile and its field.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Dict, List

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslProblem, path_str

SECTIONS = ("target", "job_options", "application")            # the profile's section -> job.<section>
FABRIC_FIELDS = ("environment", "environment_expanded")
# fields that spell one setting: a DSL that gives one of them takes the profile's value of the others away
SAME_SETTING = (
    (("target", "job_scheduler_type"), ("target", "queue_type")),
    (("job_options", "queue"), ("job_options", "partition"), ("target", "partition")),
    (("application", "launcher"), ("optimisation", "app_type-ai_training", "config", "distributed_launch")),
)


def known(presets):
    names = sorted(presets or {})
    return "known presets: %s" % ", ".join(names) if names else "the site profile has no fabric presets"


@dataclasses.dataclass
class Merged(object):
    """A DSL document laid over a site profile: where each value from the profile came from (the DSL path of the
    value -> the profile's field), and the problems of the merge itself (an unknown fabric preset)."""
    doc: object
    source: str = ""
    origins: Dict[str, str] = dataclasses.field(default_factory=dict)
    problems: List[DslProblem] = dataclasses.field(default_factory=list)

    def named(self, problem):
        """``problem``, naming the profile and its field when the value at its path came from the profile."""
        for path, field in self.origins.items():
            if problem.path == path or problem.path.startswith((path + ".", path + "[")):
                return DslProblem(problem.path, "%s (the value comes from the site profile %s, field %s%s)"
                                  % (problem.message, self.source, field, problem.path[len(path):]),
                                  problem.value, problem.hint)
        return problem


def merge(site, doc):
    """``doc`` (a parsed, not yet validated DSL document) laid over ``site`` (a Site, or None for none)."""
    job = doc.get("job") if isinstance(doc, dict) else None
    if not isinstance(job, dict):
        return Merged(doc)                       # the checks name what is wrong with the document
    merged = Merged(doc, site.source if site else "")
    job = copy.deepcopy(job)
    for section in SECTIONS if site else ():
        defaults = {k: v for k, v in (site.doc.get(section) or {}).items() if not _spelt_otherwise(job, section, k)}
        if defaults and isinstance(job.get(section, {}), dict):
            job[section] = _laid(defaults, job.get(section, {}), "job." + section, section, merged.origins)
    app = job.get("application")
    if isinstance(app, dict) and "fabric" in app:
        merged.problems.extend(_fabric(site, app, merged.origins))
    merged.doc = dict(doc, job=job)
    return merged


def _spelt_otherwise(job, section, key):
    """Whether the DSL gives the setting of the profile's ``section.key`` under another of its names."""
    for spellings in SAME_SETTING:
        if (section, key) in spellings:
            return any(_given(job, other) for other in spellings if other != (section, key))
    return False


def _given(job, path):
    node = job
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _laid(defaults, own, path, field, origins):
    """``own`` over ``defaults``: mappings merged key by key, anything else the DSL's; each value taken from the
    profile is recorded in ``origins``."""
    out = dict(own)
    for key, value in defaults.items():
        if key not in own:
            out[key] = copy.deepcopy(value)
            origins[path_str(path.split(".") + [key])] = field + "." + key
        elif isinstance(value, dict) and isinstance(own[key], dict):
            out[key] = _laid(value, own[key], path + "." + key, field + "." + key, origins)
    return out


def _fabric(site, app, origins):
    """Lay the chosen preset's variables under the application's (its own win); problems of the choice."""
    name = app["fabric"]
    presets = site.presets() if site else {}
    if not isinstance(name, str):
        return []                                # the schema names it
    if name not in presets:
        hint = known(presets) if site else "give a site profile with a fabric section (modak --site FILE, " \
            "MODAK_SITE, or the modules' site option)"
        return [DslProblem("job.application.fabric", "names no fabric preset of the site profile", name, hint)]
    own = set()
    for field in FABRIC_FIELDS:
        own |= set(app[field]) if isinstance(app.get(field), dict) else set()
    for field in FABRIC_FIELDS:
        values = {k: v for k, v in (presets[name].get(field) or {}).items() if k not in own}
        if values and isinstance(app.get(field, {}), dict):
            for key in values:
                origins[path_str(["job", "application", field, key])] = "fabric.%s.%s.%s" % (name, field, key)
            values.update(app.get(field, {}))
            app[field] = values
    return []
