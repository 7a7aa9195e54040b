"""Every module EXAMPLE that does not run in a bare project says what it needs, in a comment above it.

The bare project is the one README.md's "Install it in your project" makes: the collection installed, its
examples/ folder copied in. tests/integration/test_module_examples.py runs the EXAMPLES there; its ELSEWHERE names
those that need a cluster or a site's files, and it gives the project what some others take as given (GIVEN). Each
of those examples, or its module's EXAMPLES as a whole, has a comment that tells the user, and each module's
documentation carries the note that says so (the doc fragment sodalite.modak.examples).
"""

from __future__ import annotations

import ast
import os
import re

import pytest
import yaml
from helpers import ROOT

MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules")) if f.endswith(".py"))
RUNNER = os.path.join(ROOT, "tests", "integration", "test_module_examples.py")
# what test_module_examples.py puts into the project for some examples: a DSL beside the playbook, benchmark
# records, the inventory's site profile, a registry password
GIVEN = ("job.yml", "results/bench.sqlite", "modak_site", "registry_password")


def _assigned(path, name):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    return next(node.value for node in tree.body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", None) == name)


def examples_text(module):
    return _assigned(os.path.join(ROOT, "plugins", "modules", module + ".py"), "EXAMPLES").value


def commented_tasks(text):
    """(task name, its own comment, the EXAMPLES' leading comment) for each task: a comment is the run of `#` lines
    right above the task; the leading comment is the one above the first task, which speaks for all of them."""
    lines = text.splitlines()
    found, leading = [], None
    for index, line in enumerate(lines):
        match = re.match(r"^- name: (.*)$", line)
        if not match:
            continue
        above = index
        while above > 0 and lines[above - 1].startswith("#"):
            above -= 1
        comment = " ".join(line.lstrip("# ") for line in lines[above:index])
        if leading is None:
            leading = comment
        found.append((yaml.safe_load(match.group(1)), comment, leading))
    return found


def needs_more(module, text):
    elsewhere = ast.literal_eval(_assigned(RUNNER, "ELSEWHERE"))
    tasks = yaml.safe_load(text)
    return [task["name"] for task in tasks if task["name"] in elsewhere
            or any(given in yaml.safe_dump(task) for given in GIVEN)]


def test_the_runner_still_names_what_it_gives():
    with open(RUNNER, encoding="utf-8") as handle:
        runner = handle.read()
    assert [given for given in GIVEN if given not in runner] == []


@pytest.mark.parametrize("module", MODULES)
def test_an_example_that_needs_more_than_the_project_says_so(module):
    text = examples_text(module)
    assert [name for name, _own, _leading in commented_tasks(text)] == [t["name"] for t in yaml.safe_load(text)]
    needing = needs_more(module, text)
    silent = [name for name, own, leading in commented_tasks(text) if name in needing and not (own or leading)]
    assert silent == [], "examples that need a cluster or files the project lacks, with no comment saying so"


def test_a_comment_names_what_the_example_takes_as_given():
    """The given files and variables are named in the comment above the example that uses them."""
    unnamed = []
    for module in MODULES:
        text = examples_text(module)
        tasks = {task["name"]: yaml.safe_dump(task) for task in yaml.safe_load(text)}
        for name, own, leading in commented_tasks(text):
            unnamed += ["%s: %s: %s" % (module, name, given) for given in GIVEN
                        if given in tasks[name] and given not in own + " " + leading]
    assert unnamed == []


@pytest.mark.parametrize("module", MODULES)
def test_each_module_carries_the_note_on_its_examples(module):
    documentation = yaml.safe_load(_assigned(os.path.join(ROOT, "plugins", "modules", module + ".py"),
                                             "DOCUMENTATION").value)
    assert "sodalite.modak.examples" in documentation["extends_documentation_fragment"]


def test_the_note_names_a_section_of_the_readme():
    fragment = yaml.safe_load(_fragment())
    section = re.search(r'under "([^"]+)"', " ".join(fragment["notes"])).group(1)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        assert "\n## %s\n" % section in handle.read()


def _fragment():
    with open(os.path.join(ROOT, "plugins", "doc_fragments", "examples.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    return next(node.value.value for node in cls.body if isinstance(node, ast.Assign))
