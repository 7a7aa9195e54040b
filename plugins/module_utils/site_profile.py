# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Site profiles: one file giving a site's defaults for the DSL's site fields, and its fabric presets.

A profile (schema.SITE_SCHEMA) is checked on its own when it is read, each problem at its field in the profile.
``merge`` then lays a DSL document over it, once, before the document is read (dsl.py): the profile's
``target``, ``job_options`` and ``application`` are the defaults of ``job.<section>``, and the DSL's values win
field by field (mappings merged, lists and scalars replaced). The preset ``application.fabric`` names is laid
under the application's ``environment`` and ``environment_expanded``, so that its variables reach the job
script as the application's own do, and a variable the application sets itself wins. A problem the DSL's
checks find in a value that came from the profile names the profile and its field.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Dict, List

from ansible_collections.sodalite.modak.plugins.module_utils import dsl_check, dsl_rules, schema, strict_load
from ansible_collections.sodalite.modak.plugins.module_utils.distributed import RENDEZVOUS_NAMES
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, SiteInvalid, path_str

SECTIONS = ("target", "job_options", "application")            # the profile's section -> job.<section>
FABRIC_FIELDS = ("environment", "environment_expanded")
INLINE = "site_profile"                                         # the name of a profile given as data
# fields that spell one setting: a DSL that gives one of them takes the profile's value of the others away
SAME_SETTING = (
    (("target", "job_scheduler_type"), ("target", "queue_type")),
    (("job_options", "queue"), ("job_options", "partition"), ("target", "partition")),
    (("application", "launcher"), ("optimisation", "app_type-ai_training", "config", "distributed_launch")),
)


@dataclasses.dataclass(frozen=True)
class Site(object):
    """A checked site profile: ``source`` names it in messages (its path, or ``site_profile``)."""
    source: str
    doc: dict

    def presets(self):
        return self.doc.get("fabric") or {}


def load_file(path, source=None):
    """The Site of a profile file (YAML or JSON, a regular file, as small as a DSL), named ``source`` (default its
    path; the name the user gave where ``path`` is a decrypted copy); SiteInvalid names its problems, IOError or
    OSError an unreadable file."""
    source = str(source or path)
    fmt = "json" if source.endswith(".json") else ("yaml" if source.endswith((".yml", ".yaml")) else "auto")
    try:
        doc = strict_load.loads(strict_load.read_file(path, strict_load.SITE), fmt, strict_load.SITE)
    except DslInvalid as exc:
        raise SiteInvalid(source, exc.problems)
    return from_data(doc, source)


def from_data(doc, source=INLINE):
    """The Site of a profile given as data (``source`` names it); SiteInvalid lists every problem."""
    found = problems(doc)
    if found:
        raise SiteInvalid(source, found)
    return Site(source, copy.deepcopy(doc))


def problems(doc):
    """Every problem of a profile, at its field: the schema's, then the presets' variables and the default
    preset."""
    if not isinstance(doc, dict):
        return [DslProblem("", "a site profile must be a mapping", type(doc).__name__,
                           "start with target:, job_options:, application: or fabric:")]
    found = dsl_check.schema_problems(doc, schema.SITE_SCHEMA)
    if any(p.path.startswith("fabric") for p in found):
        return found                             # the presets' rules read presets the schema accepted
    for name, preset in sorted((doc.get("fabric") or {}).items()):
        found.extend(_preset_problems(name, preset))
    default = (doc.get("application") or {}).get("fabric")
    if isinstance(default, str) and default not in (doc.get("fabric") or {}):
        found.append(DslProblem("application.fabric", "names no preset of this profile's fabric section", default,
                                _known(doc.get("fabric"))))
    return found


def _preset_problems(name, preset):
    out = []
    literal = preset.get("environment") or {}
    for field in FABRIC_FIELDS:
        base = "fabric.%s.%s" % (name, field)
        variables = preset.get(field) or {}
        out.extend(dsl_rules.environment_problems(variables, base))
        for key in sorted(set(variables) & set(RENDEZVOUS_NAMES)):
            out.append(DslProblem(path_str(base.split(".") + [key]), "is set by the launch for each rank; a "
                                  "preset's value would give every rank the same one", variables[key],
                                  "remove it: the launch sets it (MASTER_PORT follows the job id)"))
    for key in sorted(set(preset.get("environment_expanded") or {}) & set(literal)):
        out.append(DslProblem("fabric.%s.environment_expanded.%s" % (name, key),
                              "is also in fabric.%s.environment" % name, hint="set it in one of them"))
    expanded = {"environment_expanded": preset.get("environment_expanded") or {}}
    out.extend(dsl_rules.expanded_problems(expanded, "fabric.%s.environment_expanded" % name))
    return out


def _known(presets):
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
        hint = _known(presets) if site else "give a site profile with a fabric section (modak --site FILE, " \
            "MODAK_SITE, or the modules' site option)"
        return [DslProblem("job.application.fabric", "names no fabric preset of the site profile", name, hint)]
    own = set()
    for field in FABRIC_FIELDS:
        own |= set(app[field]) if isinstance(app.get(field), dict) else set()
    for field in FABRIC_FIELDS:
        values = {k: v for k, v in (presets[name].get(field) or {}).items() if k not in own}
        if values and isinstance(app.get(field, {}), dict):
            values.update(app.get(field, {}))
            app[field] = values
            for key in values:
                origins[path_str(["job", "application", field, key])] = "fabric.%s.%s.%s" % (name, field, key)
    return []
