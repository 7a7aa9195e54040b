# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 1 of the pipeline: load the DSL (JSON or YAML), read the original MODAK's forms into canonical ones
(compat), validate once (dsl_check: the schema, then dsl_rules), build the JobRequest (dsl_request).

Every problem is collected and reported at once, each with its path, the bad value and a hint.
"""

from __future__ import annotations

import traceback

from ansible_collections.sodalite.modak.plugins.module_utils import compat, dsl_check, dsl_request, schema, strict_load
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


def _read(doc):
    """(the canonical form of ``doc``, its problems, each at the path the user wrote and, for a document read
    from a file, at its file:line:column)."""
    canonical = compat.normalise(doc, schema.SCHEMA)
    found = [canonical.where(p) for p in dsl_check.problems(canonical.doc)]
    locations = getattr(doc, "locations", None)
    return canonical, [locations.locate(p) for p in found] if locations is not None else found


def problems(doc):
    """All problems of a parsed document, at the paths it uses."""
    return _read(doc)[1]


def parse(doc):
    """Validate ``doc`` once and return its JobRequest, or raise DslInvalid listing every problem."""
    canonical, found = _read(doc)
    if found:
        raise DslInvalid(found)
    return dsl_request.build(canonical.doc, canonical.notes, canonical.warnings)


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
