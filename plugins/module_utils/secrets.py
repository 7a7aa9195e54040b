# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""application.secrets: variables whose values are read on the node when the job runs (``env``, ``file``: the
value never enters the script) or written only into the private job script (``value``); and the redaction that
keeps every secret value out of results, reports, play output and ansible-runner's artifacts."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.model import SECRET_SHOWN, Secret


def run_time_word(kind, ref):
    """The shell word the script assigns a secret from: ``env`` the node's variable (the job stops when it is
    unset or empty), ``file`` the file's text (the job stops when it cannot be read), ``value`` the value itself
    (quoted, marked Secret)."""
    if kind == "env":
        return shell.Raw('"${%s:?is not set on the node (application.secrets)}"' % ref)
    if kind == "file":
        return shell.Raw('"$(cat -- %s)"' % shell.quote(ref))
    return Secret(ref)


def env_pairs(app):
    """(name, word) for each secret of the Application ``app``."""
    return [(name, run_time_word(kind, ref)) for name, kind, ref in app.secrets]


def values(app):
    """The secret values a result or report must never show (``value`` forms; references hold none), in every
    form the script writes them (hidden_forms)."""
    return hidden_forms(ref for _name, kind, ref in app.secrets if kind == "value" and ref)


def hidden_forms(raw):
    """The texts that show a secret value: the value, its shell-quoted form (a value with a quote is written
    ``'ab'"'"'cd'``, which holds no ``ab'cd``) and the parts of the value between its quotes (3 characters or more),
    longest first, so that a longer form is masked before a part of it."""
    found = set()
    for value in raw:
        found.update((value, shell.quote(value)))
        found.update(part for part in value.split("'") if len(part) >= 3)
    return sorted(found, key=len, reverse=True)


def document_values(document):
    """The ``value`` secrets of a DSL document as given (before it is checked), so that they are masked even in a
    failure's result."""
    try:
        found = document["job"]["application"]["secrets"]
        return hidden_forms(form["value"] for form in found.values()
                            if isinstance(form, dict) and isinstance(form.get("value"), str) and form["value"])
    except (KeyError, TypeError, AttributeError):
        return []


def redact(data, hidden):
    """``data`` (text, lists, dicts) with every string in ``hidden`` replaced by SECRET_SHOWN."""
    if not hidden:
        return data
    if isinstance(data, str):
        for value in hidden:
            data = data.replace(value, SECRET_SHOWN)
        return data
    if isinstance(data, dict):
        return {key: redact(value, hidden) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact(value, hidden) for value in data]
    return data
