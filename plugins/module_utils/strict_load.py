# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict JSON and YAML reading: what a plain loader accepts silently or crashes on becomes a problem with a path.

* a key given twice in one mapping is refused (plain loaders keep the last one);
* a YAML date or time stays the text it was (YAML 1.2 and JSON have no date type), so that an impossible
  date such as 2026-02-30 is reported by the field's own check instead of crashing the loader;
* a YAML integer too long to convert is refused where it stands;
* aliases (``*name``, the alias bombs), deep nesting, too many elements and oversized texts are refused before
  anything is built, with limits per kind of document (``DSL``, ``CATALOG``);
* read from a file (``source``), a document keeps where each value stands (``Locations``): a syntax error and
  every problem found later name ``file:line:column``, and a value that YAML 1.1 read as a boolean or a number
  where a text is wanted (``no``, ``0755``, ``2.10``) is told to be quoted as written.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Optional

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


def yaml_load(text, composed=None):
    """One YAML document, safely; raises DslInvalid with paths, or yaml.YAMLError. ``composed`` (a list) receives
    the document's node tree, for its positions."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if composed is not None:
            composed.append(node)
        _node_paths(node, [], loader.paths)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    if loader.problems:
        raise DslInvalid(loader.problems)
    return data


@dataclass(frozen=True)
class Position:
    """Where one value of a document stands (1-based), where its key does, and a plain YAML scalar's text and
    resolved tag (None for a quoted text, a mapping or a list)."""
    line: int
    column: int
    key_line: int
    key_column: int
    text: Optional[str] = None
    tag: Optional[str] = None


# a plain scalar that YAML 1.1 reads as one of these where the DSL wants a text: the value to quote
_READS_AS = {"tag:yaml.org,2002:bool": "the boolean", "tag:yaml.org,2002:int": "the number",
             "tag:yaml.org,2002:float": "the number"}
# one step of a DSL path as errors.path_str writes it: a plain key, [index] or ["quoted key"]
_STEP = re.compile(r'\[(?:"(?:[^"\\]|\\.)*"|\d+)\]|[^.\[]+')


class Locations(object):
    """The positions of a document read from ``source``: DSL path (errors.path_str) -> Position."""

    def __init__(self, source, positions=None):
        self.source = source
        self.positions = positions or {}

    def at(self, line, column):
        return "%s:%d:%d" % (self.source, line, column)

    def locate(self, problem):
        """``problem`` with the location of its value, else of the nearest parent key that is written; a value
        YAML 1.1 turned into a boolean or a number where a text is wanted gets the hint to quote it."""
        if problem.location:
            return problem
        found = self.positions.get(problem.path)
        if found is not None:
            return problem.located(self.at(found.line, found.column), _quote_hint(problem, found))
        steps = [problem.path[:m.end()] for m in _STEP.finditer(problem.path or "")]
        for prefix in reversed(steps[:-1]):
            found = self.positions.get(prefix)
            if found is not None:
                return problem.located(self.at(found.key_line, found.key_column))
        root = self.positions.get("")
        return problem.located(self.at(root.line, root.column) if root else self.source)


def _quote_hint(problem, position):
    if position.tag not in _READS_AS or position.text is None:
        return None
    if not (problem.message.startswith("must be of type") and "string" in problem.message):
        return None
    value = problem.value
    shown = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    hint = 'quote the value as written: "%s"' % position.text
    if shown != position.text:
        hint += " (YAML 1.1 reads %s as %s %s)" % (position.text, _READS_AS[position.tag], shown)
    return hint


class Document(dict):
    """A document read from a file: a dict like any other, that also knows where its values stand."""

    locations = None


def _positions(root, yaml11=True):
    """DSL path -> Position of every node of a composed YAML document (JSON is YAML for this, without YAML 1.1's
    readings of plain words: ``yaml11`` False). A key given twice is placed at its last occurrence."""
    out = {}
    todo = [(root, [], root.start_mark)]
    while todo:
        node, parts, key_mark = todo.pop()       # a mapping's items come off last first
        path = path_str(parts)
        if path in out:
            continue
        plain = yaml11 and isinstance(node, yaml.ScalarNode) and not node.style   # libyaml: '' where PyYAML: None
        out[path] = Position(node.start_mark.line + 1, node.start_mark.column + 1, key_mark.line + 1,
                             key_mark.column + 1, node.value if plain else None, node.tag if plain else None)
        if isinstance(node, yaml.MappingNode):
            for key_node, value in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                todo.append((value, parts + [key], key_node.start_mark))
        elif isinstance(node, yaml.SequenceNode):
            for index, value in enumerate(node.value):
                todo.append((value, parts + [index], value.start_mark))
    return out


def _compose(text, limits):
    """The node tree of ``text`` (JSON, read already) for its positions only, or None when it does not compose as
    YAML or passes ``limits``' elements (the guard runs first: composing stays bounded)."""
    try:
        _yaml_guard(text, limits)
        return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (DslInvalid, yaml.YAMLError, RecursionError, ValueError):
        return None


def _mark(source, mark):
    return "%s:%d:%d" % (source, mark.line + 1, mark.column + 1) if source and mark is not None else None


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


def loads(text, fmt="auto", limits=DSL, source=None):
    """JSON or YAML text (or UTF-8 bytes) -> plain data, within ``limits``; raises DslInvalid with paths.

    With ``source`` (the file's name) every problem names ``source:line:column`` and a mapping comes back as a
    Document whose ``locations`` place the problems found later (dsl.parse)."""
    if source is None:
        return _loads(text, fmt, limits, None, None)
    composed = []
    try:
        data = _loads(text, fmt, limits, source, composed)
    except DslInvalid as exc:         # a hostile document is never composed again: only YAML's own node tree
        node = composed[0] if composed else None
        locations = Locations(source, _positions(node) if node is not None else {})
        raise DslInvalid([locations.locate(problem) for problem in exc.problems])
    if isinstance(data, dict):
        node = composed[0] if composed else _compose(_text(text), limits)   # JSON: composed as YAML for positions
        data = Document(data)
        data.locations = Locations(source, _positions(node, yaml11=bool(composed)) if node is not None else {})
    return data


def _text(text):
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


def _loads(text, fmt, limits, source, composed):
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
            where = "%s:%d:%d" % (source, exc.lineno, exc.colno) if source and hasattr(exc, "lineno") else None
            raise DslInvalid([DslProblem("", "not valid JSON: %s" % getattr(exc, "msg", exc),
                                         hint="check commas, quotes and braces", location=where)])
        if depth(data, limit=limits.max_depth) > limits.max_depth:
            raise _too_deep(limits)
        return data
    if yaml is None:
        raise DslInvalid([DslProblem("", "PyYAML is needed to read YAML documents")])
    try:
        _yaml_guard(text, limits)
        return yaml_load(text, composed)
    except yaml.MarkedYAMLError as exc:
        if not source:
            raise DslInvalid([DslProblem("", "not valid YAML: %s" % str(exc).replace("\n", " "))])
        said = exc.problem or "cannot be read"
        if exc.context:
            said += " (%s%s)" % (exc.context, " at %s" % _mark(source, exc.context_mark)[len(source) + 1:]
                                 if exc.context_mark is not None else "")
        raise DslInvalid([DslProblem("", "not valid YAML: %s" % said, location=_mark(
            source, exc.problem_mark or exc.context_mark))])
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
