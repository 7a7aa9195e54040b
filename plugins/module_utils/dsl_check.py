# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of the canonical document: the schema's errors said by path with a hint, then the rules
(dsl_rules) where the schema found nothing wrong in the same place."""

from __future__ import annotations

import math
import traceback

from ansible_collections.sodalite.modak.plugins.module_utils import dsl_rules, schema
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, nearest, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.model import SECRET_SHOWN

try:
    import jsonschema
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - reported by the module
    jsonschema = None
    JSONSCHEMA_IMPORT_ERROR = traceback.format_exc()


def _pattern_keyword(validator, pattern, instance, _schema):
    if validator.is_type(instance, "string") and len(instance) > _schema.get("maxLength", schema.PATTERN_MAX_LENGTH):
        if "maxLength" not in _schema:  # otherwise maxLength reports it; the pattern never sees a long text
            yield jsonschema.ValidationError("is too long", validator="maxLength",
                                             validator_value=schema.PATTERN_MAX_LENGTH)
    elif validator.is_type(instance, "string") and not schema.end_anchored(pattern).search(instance):
        yield jsonschema.ValidationError("%r does not match %r" % (instance, pattern))


_VALIDATOR = []


def _is_integer(_checker, instance):
    """Only whole numbers written as integers: 2.0 is not a task count (JSON Schema would accept it)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(_checker, instance):
    """Finite numbers only: NaN and infinities (YAML .nan/.inf, JSON NaN) are refused."""
    return (isinstance(instance, (int, float)) and not isinstance(instance, bool)
            and (isinstance(instance, int) or math.isfinite(instance)))


def _validator(rules=None):
    """A validator of ``rules`` (the DSL's schema by default) with JSON Schema's meaning of patterns and numbers."""
    if not _VALIDATOR:
        base = jsonschema.Draft202012Validator
        checker = base.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
        _VALIDATOR.append(jsonschema.validators.extend(base, {"pattern": _pattern_keyword}, type_checker=checker))
        _VALIDATOR.append(_VALIDATOR[0](schema.SCHEMA))
    return _VALIDATOR[1] if rules is None else _VALIDATOR[0](rules)


def _sub_schema(error):
    return error.schema if isinstance(error.schema, dict) else {}


def schema_problems(doc, rules=None, base=()):
    """The problems of ``doc`` against ``rules`` (the DSL's schema by default), each at its path below ``base``."""
    validator = _validator(rules)
    problems = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = list(base) + list(error.absolute_path)
        path = path_str(where)
        sub = _sub_schema(error)
        kind = error.validator
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            known = list(sub.get("properties", {}))
            for key in sorted(set(error.instance) - set(known), key=str):
                guess = nearest(key, known)
                hint = "did you mean '%s'?" % guess if guess else "valid keys: %s" % ", ".join(known)
                problems.append(DslProblem(path_str(where + [key]), "unknown key '%s'" % key, hint=hint))
        elif kind == "enum":
            choices = [c for c in sub.get("enum", []) if c != ""]
            guess = nearest(error.instance, choices)
            hint = ("did you mean '%s'? " % guess if guess else "") + "one of: %s" % ", ".join(map(str, choices))
            problems.append(DslProblem(path, "not an accepted value", error.instance, hint))
        elif kind == "required":
            missing = error.message.split("'")[1] if "'" in error.message else error.message
            problems.append(DslProblem(path_str(where + [missing]), "is required", hint=sub.get("properties", {})
                                       .get(missing, {}).get("description")))
        elif kind == "pattern":
            problems.append(DslProblem(path, "has characters or a form that is not accepted", error.instance,
                                       sub.get("description") or "one line, no spaces or shell characters"))
        elif kind == "type":
            want = sub.get("type")
            want = " or ".join(want) if isinstance(want, list) else want
            problems.append(DslProblem(path, "must be of type %s" % want, error.instance))
        elif kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            problems.append(DslProblem(path, "is out of range (%s %s)" % (kind, error.validator_value),
                                       error.instance, sub.get("description")))
        elif kind in ("maxLength", "maxItems", "maxProperties"):
            problems.append(DslProblem(path, "is too long (%s %s)" % (kind, error.validator_value)))
        elif kind == "propertyNames":
            problems.append(DslProblem(path, "has a variable name that is not accepted", error.instance,
                                       "names are letters, digits and '_', not starting with a digit"))
        else:
            problems.append(DslProblem(path, error.message))
    return problems


def problems(doc):
    """All problems of a canonical document (compat.normalise), schema first, then the rules."""
    if jsonschema is None:
        raise DslInvalid([DslProblem("", "the jsonschema library is needed to validate the DSL")])
    if not isinstance(doc, dict):
        return [DslProblem("", "the document must be a mapping with a 'job' key", type(doc).__name__,
                           'start with {"job": {"application": {...}}}')]
    found = dsl_rules.number_problems(doc) + schema_problems(doc)
    if not found:
        found.extend(dsl_rules.document_problems(doc))
    else:
        # the rules are still checked where the schema found nothing wrong in the same place
        seen = set(p.path for p in found)
        found.extend(p for p in _safe_rules(doc) if p.path not in seen)
    return sorted((_without_secret(p) for p in found), key=lambda p: p.path)


def _without_secret(problem):
    """A problem of application.secrets shown without its value (a secret is never printed)."""
    if problem.path.startswith("job.application.secrets") and problem.value is not None:
        return DslProblem(problem.path, problem.message, SECRET_SHOWN, problem.hint)
    return problem


def _safe_rules(doc):
    try:
        return dsl_rules.document_problems(doc)
    except (TypeError, AttributeError, KeyError, ValueError):
        return []
