# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict JSON and YAML reading: what a plain loader accepts silently or crashes on becomes a problem with a path.

* a key given twice in one mapping is refused (plain loaders keep the last one);
* a YAML date or time stays the text it was (YAML 1.2 and JSON have no date type), so that an impossible
  date such as 2026-02-30 is reported by the field's own check instead of crashing the loader;
* a YAML integer too long to convert is refused where it stands;
* aliases (``*name``, the alias bombs), deep nesting, too many elements and oversized texts are refused before
  anything is built, with limits per kind of document (``DSL``, ``CATALOG``).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, path_str

try:
    import yaml
except ImportError:  # pragma: no cover - reported by the module
    yaml = None


@dataclass(frozen=True)
class Limits:
    """What one kind of document may be: its name in messages, bytes, nesting depth and elements."""
    what: str
    max_bytes: int
    max_depth: int
    max_nodes: int


# a DSL document is small; a catalog of 10,000 images of seven attributes is about 1.6 MiB of YAML (and takes
# seconds to read and check: the cap keeps a hostile file from taking minutes)
DSL = Limits("a DSL document", 1024 * 1024, 32, 20000)
SITE = Limits("a site profile", 1024 * 1024, 32, 20000)
CATALOG = Limits("a catalog", 2 * 1024 * 1024, 32, 400000)

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


def _too_large(limits):
    return DslInvalid([DslProblem("", "%s is larger than %d bytes" % (limits.what, limits.max_bytes))])


def _too_deep(limits):
    return DslInvalid([DslProblem("", "%s nests deeper than %d levels" % (limits.what, limits.max_depth))])


def _yaml_guard(text, limits):
    """Refuse aliases (alias bombs), deep nesting and too many elements before anything is built."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.AliasEvent):
            raise DslInvalid([DslProblem("", "YAML aliases (*name) are not accepted in %s" % limits.what,
                                         hint="write the values out in full")])
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > limits.max_depth:
                raise _too_deep(limits)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        nodes += 1
        if nodes > limits.max_nodes:
            raise DslInvalid([DslProblem("", "%s has more than %d elements" % (limits.what, limits.max_nodes))])


def depth(value, level=0, limit=64):
    """The nesting depth of plain data (counting stops past ``limit``); only containers are descended into (a
    catalog of 10,000 images holds 70,000 texts)."""
    if level > limit:
        return level
    if isinstance(value, dict):
        children = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return level
    deepest = level + 1
    for child in children:
        if isinstance(child, (dict, list)):
            deepest = max(deepest, depth(child, level + 1, limit))
    return deepest


def loads(text, fmt="auto", limits=DSL):
    """JSON or YAML text (or UTF-8 bytes) -> plain data, within ``limits``; raises DslInvalid with paths."""
    if isinstance(text, bytes):
        if len(text) > limits.max_bytes:
            raise _too_large(limits)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DslInvalid([DslProblem("", "%s must be UTF-8 text: %s" % (limits.what, exc))])
    if len(text) > limits.max_bytes:
        raise _too_large(limits)
    if fmt == "json" or (fmt == "auto" and text.lstrip().startswith("{")):
        try:
            data = json_loads(text)
        except RecursionError:
            raise _too_deep(limits)
        except ValueError as exc:
            raise DslInvalid([DslProblem("", "not valid JSON: %s" % exc, hint="check commas, quotes and braces")])
        if depth(data, limit=limits.max_depth) > limits.max_depth:
            raise _too_deep(limits)
        return data
    if yaml is None:
        raise DslInvalid([DslProblem("", "PyYAML is needed to read YAML documents")])
    try:
        _yaml_guard(text, limits)
        return yaml_load(text)
    except yaml.YAMLError as exc:
        raise DslInvalid([DslProblem("", "not valid YAML: %s" % str(exc).replace("\n", " "))])


def read_file(path, limits=DSL):
    """The bytes of a regular file, at most ``limits.max_bytes`` + 1 of them (a larger file is refused unread).

    A FIFO, a device or a directory is refused before it is read (reading a FIFO blocks until a writer comes);
    the file is opened with O_NONBLOCK so that the open itself cannot block, then checked on its descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    handle = os.open(path, flags)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise DslInvalid([DslProblem("", "%s must be a regular file; %s is not" % (limits.what, path),
                                         hint="give the path of a file")])
        if info.st_size > limits.max_bytes:
            raise _too_large(limits)
        chunks, left = [], limits.max_bytes + 1
        while left > 0:
            chunk = os.read(handle, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)
