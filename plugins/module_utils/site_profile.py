# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Site profiles: one file giving a site's defaults for the DSL's site fields, and its fabric presets.

A profile (schema.SITE_SCHEMA) is read and checked on its own, each problem at its field in the profile
(SiteInvalid); site_merge.merge then lays each DSL document over it, in step one (dsl.py).
"""

from __future__ import annotations

import copy
import dataclasses

from ansible_collections.sodalite.modak.plugins.module_utils import (
    dsl_check, dsl_rules, schema, site_merge, strict_load)
from ansible_collections.sodalite.modak.plugins.module_utils.distributed import RENDEZVOUS_NAMES
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, SiteInvalid, path_str

INLINE = "site_profile"                                         # the name of a profile given as data
# the options of the tasks that read a DSL (optimise, container_recipe; doc fragment sodalite.modak.site): O(site), a
# profile file read where the DSL file is read (on the controller by the action plugins), or O(site_profile), the
# profile as data (an inventory variable such as modak_site in group_vars)
TASK_OPTIONS = dict(site=dict(type="path"), site_profile=dict(type="dict"))
TASK_EXCLUSIVE = [("site", "site_profile")]


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


def of_task(params, read=None):
    """The Site of a task's options, or None: O(site) read with ``read`` (path -> Site; by default load_file, where
    this code runs), else O(site_profile) checked as a profile named ``site_profile``."""
    if params.get("site"):
        return (read or load_file)(params["site"])
    if params.get("site_profile") is not None:
        return from_data(params["site_profile"], INLINE)
    return None


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
                                site_merge.known(doc.get("fabric"))))
    return found


def _preset_problems(name, preset):
    out = []
    literal = preset.get("environment") or {}
    for field in site_merge.FABRIC_FIELDS:
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
