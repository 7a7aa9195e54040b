# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict JSON and YAML reading: what a plain loader accepts silently or crashes on becomes a problem with a path.

* a key given twice in one mapping is refused (plain loaders keep the last one);
* a YAML date or time stays the text it was (YAML 1.2 and JSON have no date type), so that an impossible
  date such as 2026-02-30 is reported by the field's own check instead of crashing the loader;
* a YAML integer too long to convert is refused where it stands.
"""

from __future__ import annotations

import json

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, path_str

try:
    import yaml
except ImportError:  # pragma: no cover - reported by the module
    yaml = None

DUPLICATE = "is given more than once in the same mapping"
DUPLICATE_HINT = "keep one of them: a loader would silently keep only the last"


def _duplicates(path, keys):
    seen, out = set(), []
    for key in keys:
        try:
            if key in seen:
                out.append(DslProblem(path_str(path + [key]), DUPLICATE, hint=DUPLICATE_HINT))
            seen.add(key)
        except TypeError:           # an unhashable key; the constructor reports it
            pass
    return out


def json_loads(text):
    """json.loads, refusing duplicate keys with their paths."""
    found = []

    def pairs(items):
        out = dict(items)
        if len(out) != len(items):
            found.append((out, [k for k, _v in items]))
        return out

    data = json.loads(text, object_pairs_hook=pairs)
    if found:
        where = dict((id(node), keys) for node, keys in found)
        problems = []
        _walk(data, [], lambda node, path: problems.extend(_duplicates(path, where.get(id(node), ()))))
        raise DslInvalid(problems or [DslProblem("", "the document has a key given twice in one mapping")])
    return data


def _walk(node, path, visit):
    if isinstance(node, dict):
        visit(node, path)
        for key, value in node.items():
            _walk(value, path + [key], visit)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _walk(value, path + [index], visit)


if yaml is not None:
    _BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(_BASE):  # pylint: disable=too-many-ancestors
        """Safe loading; duplicate keys and unreadable integers are collected with their paths."""

        def __init__(self, stream):
            _BASE.__init__(self, stream)
            self.paths = {}
            self.problems = []

        def _path(self, node):
            return self.paths.get(id(node), [])

        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                self.flatten_mapping(node)
                keys = []
                for key_node, _value in node.value:
                    keys.append(self.construct_object(key_node, deep=True))
                self.problems.extend(_duplicates(self._path(node), keys))
            return _BASE.construct_mapping(self, node, deep=deep)

        def construct_yaml_int(self, node):
            try:
                return _BASE.construct_yaml_int(self, node)
            except ValueError as exc:
                self.problems.append(DslProblem(path_str(self._path(node)), "is a number that cannot be read: %s"
                                                % str(exc).split(":", maxsplit=1)[0], hint="write a smaller number"))
                return None

        def construct_yaml_timestamp(self, node):
            return self.construct_scalar(node)

    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp)


def _node_paths(node, path, out):
    out[id(node)] = path
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
            out[id(key_node)] = path + [key]
            _node_paths(value, path + [key], out)
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            _node_paths(value, path + [index], out)


def yaml_load(text):
    """One YAML document, safely; raises DslInvalid with paths, or yaml.YAMLError."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _node_paths(node, [], loader.paths)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    if loader.problems:
        raise DslInvalid(loader.problems)
    return data
