# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 1 of the pipeline: load the DSL (JSON or YAML), lay it over the site profile (site_profile.merge: the
site's defaults, the DSL's values win), read the original MODAK's forms into canonical ones (compat), validate once
(dsl_check: the schema, then dsl_rules), build the JobRequest (dsl_request).

Every problem is collected and reported at once, each with its path, the bad value and a hint; a value that came
from the site profile names the profile and its field.
"""

from __future__ import annotations

import traceback

from ansible_collections.sodalite.modak.plugins.module_utils import (
    compat, dsl_check, dsl_request, schema, site_merge, strict_load)
from ansible_collections.sodalite.modak.plugins.module_utils.dsl_check import JSONSCHEMA_IMPORT_ERROR, jsonschema  # noqa: F401 pylint: disable=unused-import
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

try:
    import yaml  # pylint: disable=unused-import  # read as dsl.yaml by cli.py and module_support.py
    YAML_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - reported by the module
    yaml = None
    YAML_IMPORT_ERROR = traceback.format_exc()

MAX_BYTES = strict_load.DSL.max_bytes  # a DSL document is small; anything larger is refused unread


def loads(text, fmt="auto", source=None):
    """Parse DSL text (JSON or YAML, safe loading only) into plain data, within the DSL's limits; with ``source``
    (its file) every problem names file:line:column (strict_load.Locations)."""
    return strict_load.loads(text, fmt, strict_load.DSL, source)


def load_file(path):
    """Read and parse a DSL file (a regular file only); the format follows the extension, else the content.
    The document remembers where its values stand: parse() and problems() name file:line:column."""
    data = strict_load.read_file(path, strict_load.DSL)
    fmt = "json" if str(path).endswith(".json") else ("yaml" if str(path).endswith((".yml", ".yaml")) else "auto")
    return loads(data, fmt, str(path))


def _read(doc, site=None):
    """(the canonical form of ``doc`` laid over ``site``, its problems, each at the path the user wrote and, for a
    document read from a file, at its file:line:column)."""
    merged = site_merge.merge(site, doc)
    canonical = compat.normalise(merged.doc, schema.SCHEMA)
    found = [merged.named(canonical.where(p)) for p in dsl_check.problems(canonical.doc)]
    named = set(p.path for p in found)           # a fabric name the schema refused is not looked up as well
    found = sorted(found + [p for p in merged.problems if p.path not in named], key=lambda p: p.path)
    locations = getattr(doc, "locations", None)
    return canonical, [locations.locate(p) for p in found] if locations is not None else found


def problems(doc, site=None):
    """All problems of a parsed document (laid over the Site ``site``), at the paths it uses."""
    return _read(doc, site)[1]


def canonical(doc, site=None):
    """(the canonical document ``doc`` laid over ``site`` becomes, its problems): what the checks read."""
    read, found = _read(doc, site)
    return read.doc, found


def parse(doc, site=None):
    """Validate ``doc`` (laid over the Site ``site``) once and return its JobRequest, or raise DslInvalid listing
    every problem."""
    read, found = _read(doc, site)
    if found:
        raise DslInvalid(found)
    return dsl_request.build(read.doc, read.notes, read.warnings)


def with_target_default(doc, key, value):
    """A copy of ``doc`` whose job.target has ``key`` = ``value`` unless the document gives it (a site setting)."""
    job = doc.get("job") if isinstance(doc, dict) else None
    if not isinstance(job, dict):
        return doc                  # parse() names what is wrong with the document
    target = job.get("target")
    if target is not None and not isinstance(target, dict):
        return doc
    if target and key in target:
        return doc
    return dict(doc, job=dict(job, target=dict(target or {}, **{key: value})))
