"""Dependencies point one way and stay shallow: the static import graph of plugins/ (the imports of the
collection's own modules that run when a file is imported: module level, also inside try/if, not inside a
function, where a backend loads on first use) has no cycle and no chain longer than MAX_CHAIN modules; the DSL
parser is reached from none of the data modules."""

from __future__ import annotations

import ast
import functools
import os

from helpers import ROOT

PACKAGE = "ansible_collections.sodalite.modak."
PLUGINS = os.path.join(ROOT, "plugins")
MAX_CHAIN = 7
# data and their readers: the catalog, its images and recipes never parse a DSL
DATA = ("plugins.module_utils.catalog", "plugins.module_utils.recipe_images", "plugins.module_utils.model",
        "plugins.module_utils.recipe.spec", "plugins.module_utils.recipe.blocks")


def modules():
    """{dotted name under the collection: file path} of every Python file under plugins/."""
    found = {}
    for folder, _dirs, names in os.walk(PLUGINS):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def graph():
    """{module: set of the collection's modules it imports}."""
    known = modules()
    edges = {}
    for name, path in known.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        out = set()
        for node in _module_level(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + ["%s.%s" % (node.module, alias.name) for alias in node.names]
            for target in targets:
                if target.startswith(PACKAGE) and target[len(PACKAGE):] in known:
                    out.add(target[len(PACKAGE):])
        out.discard(name)
        # a package's __init__ is not a step of its own
        edges[name] = {t for t in out if not (known[t].endswith("__init__.py") and any(
            o.startswith(t + ".") for o in out))}
    return edges


def _module_level(tree):
    """The nodes that run when the module is imported: everything outside function bodies."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def longest_chain(edges):
    """The longest import chain (a list of modules, importer first); AssertionError on a cycle."""
    visiting = set()

    @functools.lru_cache(maxsize=None)
    def chain(name):
        assert name not in visiting, "import cycle through %s" % name
        visiting.add(name)
        best = max((chain(t) for t in edges.get(name, ())), key=len, default=())
        visiting.discard(name)
        return (name,) + best

    return list(max((chain(n) for n in edges), key=len))


def test_the_longest_import_chain_under_plugins_is_short():
    chain = longest_chain(graph())
    assert len(chain) <= MAX_CHAIN, " -> ".join(chain)


def test_no_data_module_reaches_the_dsl_parser():
    edges = graph()

    def reach(name, seen):
        for target in edges.get(name, ()):
            if target not in seen:
                seen.add(target)
                reach(target, seen)
        return seen

    for name in DATA:
        assert "plugins.module_utils.dsl" not in reach(name, set()), name


def test_the_chain_counter_counts_modules():
    assert longest_chain({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == ["a", "b", "c"]


def test_the_task_formats_are_the_writers():
    from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
    from ansible_collections.sodalite.modak.plugins.module_utils.tasks import container_recipe
    assert container_recipe.FORMATS == generate.FORMATS == tuple(generate.WRITERS)


def test_every_module_utils_package_is_in_the_pip_package():
    """The pip package (pyproject.toml, the `modak` command) lists its packages by name: a new folder under
    module_utils that is not listed installs without it (`modak --version` failed on launchers/)."""
    import tomllib  # pylint: disable=import-outside-toplevel
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        listed = set(tomllib.load(handle)["tool"]["setuptools"]["packages"])
    base = os.path.join(ROOT, "plugins", "module_utils")
    folders = sorted(name for name in os.listdir(base) if os.path.isfile(os.path.join(base, name, "__init__.py")))
    missing = [name for name in folders
               if "ansible_collections.sodalite.modak.plugins.module_utils.%s" % name not in listed]
    assert missing == []
