"""Hypothesis fuzzing: generated DSL documents (from the schema, mutated examples, random data and text)
through loading (JSON and YAML text), validation, matching and every scheduler backend; recipes too.

One test per property: a crash or a broken script fails that test and Hypothesis shrinks it to a small example;
each test records its own figures (documents tried, scripts, rejections) for docs/robustness.md."""

from __future__ import annotations

import copy
import json
import os
import tempfile

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from robustkit import ROOT, SCHEDULERS, bash_n, payloads, record, shellcheck_many

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, schema
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec as recipe_spec
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry, submission

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
SEED_FILES = sorted([os.path.join(ROOT, "examples", f) for f in os.listdir(os.path.join(ROOT, "examples"))
                     if os.path.isfile(os.path.join(ROOT, "examples", f))] +
                    [os.path.join(ROOT, "tests", "data", "original", f)
                     for f in os.listdir(os.path.join(ROOT, "tests", "data", "original")) if f.endswith(".json")])
SEEDS = [dsl.load_file(p) for p in SEED_FILES]
RECIPE_SEEDS = tuple(d for d in SEEDS if isinstance(d["job"].get("optimisation"), dict))
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
HOSTILE = payloads("/nonexistent/modak-canary")
# each scheduler's directive prefix (local writes none: its comment line opens the script)
PREFIX = {"slurm": "#SBATCH", "pbspro": "#PBS", "torque": "#PBS", "local": "# modak:", "gridengine": "#$",
          "flux": "# flux:"}

# documents per strategy; the sum is the number of documents tried (>= 10,000)
BUDGET = {"schema": 1000, "mutated": 2000, "random": 3500, "text": 3500, "recipe": 400, "directives": 1000}
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                       HealthCheck.large_base_example])


class Tally(object):
    """What the running fuzz test saw; its figures go to docs/robustness.md (summed over the tests)."""

    def __init__(self):
        self.counts = {}
        self.scripts = {}

    def reset(self):
        self.counts = {}
        self.scripts = {}

    def add(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n


TALLY = Tally()


# ---------------------------------------------------------------- strategies

_STRATEGIES = {}


def from_schema(sub, depth=0):
    """A strategy of values valid for the JSON Schema fragment ``sub`` (the DSL's own schema)."""
    key = (id(sub), depth)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = _from_schema(sub, depth)
    return _STRATEGIES[key]


def _from_schema(sub, depth):
    if "enum" in sub:
        return st.sampled_from(sub["enum"])
    kind = sub.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    options = []
    for one in kinds:
        if one == "object" and "properties" in sub and depth < 8:
            props = dict((k, from_schema(v, depth + 1)) for k, v in sub["properties"].items())
            required = dict((k, props.pop(k)) for k in sub.get("required", []))
            options.append(st.fixed_dictionaries(required, optional=props))
        elif one == "object":
            options.append(st.dictionaries(st.from_regex(schema.ENV_NAME, fullmatch=True),
                                           st.from_regex(schema.ONE_LINE, fullmatch=True) | st.integers(0, 99),
                                           max_size=3))
        elif one == "array":
            options.append(st.lists(from_schema(sub.get("items", {"type": "string"}), depth + 1), max_size=3))
        elif one == "string":
            pattern = sub.get("pattern")
            text = st.from_regex(pattern, fullmatch=True) if pattern else st.text(max_size=30)
            options.append(text.filter(lambda s, n=sub.get("maxLength", 10 ** 6): len(s) <= n))
        elif one == "integer":
            options.append(st.integers(sub.get("minimum", -5), min(sub.get("maximum", 10 ** 6), 10 ** 6)))
        elif one == "number":
            options.append(st.floats(0.01, 1.0))
        elif one == "boolean":
            options.append(st.booleans())
        elif one is None:
            options.append(st.text(max_size=20))
    return st.one_of(options)


SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(-2 ** 70, 2 ** 70) |
           st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40) | st.sampled_from(HOSTILE))
ANY_JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) |
                        st.dictionaries(st.text(max_size=12) | st.sampled_from(HOSTILE), inner, max_size=4),
                        max_leaves=12)


def _slots(node, here=()):
    """Every (path) of a node in a document, containers included."""
    yield here
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _slots(value, here + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _slots(value, here + (index,))


def _schema_at(path):
    sub = schema.SCHEMA
    for key in path:
        if not isinstance(sub, dict):
            return None
        if isinstance(key, int):
            sub = sub.get("items")
        else:
            sub = (sub.get("properties") or {}).get(key)
    return sub


@st.composite
def mutated(draw, seeds=tuple(SEEDS), max_edits=5):
    """An example document with up to five edits: schema-valid values, random values, hostile strings, deletions,
    unknown keys, changed types."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _i in range(draw(st.integers(0 if max_edits < 5 else 1, max_edits))):
        paths = [p for p in _slots(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        op = draw(st.sampled_from(["valid", "valid", "random", "hostile", "delete", "add", "retype"]))
        sub = _schema_at(path)
        if op == "valid" and sub:
            parent[last] = draw(from_schema(sub))
        elif op == "delete":
            del parent[last]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12) | st.sampled_from(HOSTILE))] = draw(ANY_JSON)
        elif op == "hostile":
            parent[last] = draw(st.sampled_from(HOSTILE))
        elif op == "retype":
            parent[last] = draw(st.sampled_from([[parent[last]], {"x": parent[last]}, str(parent[last]), None, 0]))
        else:
            parent[last] = draw(ANY_JSON)
    return doc


@st.composite
def scheduled(draw, documents):
    """A document, sent to one of the four backends when it has a target section."""
    doc = draw(documents)
    backend = draw(st.sampled_from(SCHEDULERS + ("pbs", "none", "bash", None)))
    target = doc.get("job", {}).get("target") if isinstance(doc.get("job"), dict) else None
    if backend and isinstance(target, dict):
        target["job_scheduler_type"] = backend
    return doc


# ---------------------------------------------------------------- the properties

class Crash(AssertionError):
    """Anything but DslInvalid/ModakError out of the core: Hypothesis shrinks it and the test fails."""


def _check_problems(exc, source):
    for problem in exc.problems:
        assert problem.message, "a problem without a message: %r" % exc
        if source == "validate":
            assert problem.path or problem.message.startswith(("the document", "PyYAML", "the jsonschema")), \
                "a validation problem without a path: %s" % problem


def _texts(doc):
    out = [("json", json.dumps(doc))]
    try:
        out.append(("yaml", yaml.dump(doc, Dumper=DUMPER, allow_unicode=True)))
    except yaml.YAMLError:
        pass
    return out


def _check_script(result):
    text = result.script.text
    lines = text.split("\n")
    scheduler = result.script.scheduler
    head = ["#!/bin/bash"] + list(result.script.directives)
    assert lines[:len(head)] == head, "directives must open the script"
    body = lines[len(head):]
    prefix = PREFIX[scheduler]
    for line in body:
        assert not line.startswith(("#SBATCH", "#PBS", "# flux:")), "an extra directive line: %r" % line
        assert not any(c in line for c in "\r\x00\x85\u2028\u2029"), "a line break inside a line: %r" % line
    for line in result.script.directives:
        assert line.startswith(prefix) and "\r" not in line
    TALLY.scripts.setdefault(text, result.script.filename)


REFUSED = object()


def _load(text, fmt):
    """The loaded data, or REFUSED when loading refused the text (with problems that carry paths)."""
    try:
        data = dsl.loads(text, fmt)
    except DslInvalid as exc:
        _check_problems(exc, "load")
        TALLY.add("rejected_at_load")
        return REFUSED
    except Exception as exc:  # pylint: disable=broad-except
        raise Crash("dsl.loads(%s) raised %r" % (fmt, exc)) from exc
    TALLY.add("loaded_" + fmt)
    return data


def _optimise(data):
    try:
        result = pipeline.optimise(data, CATALOG)
    except DslInvalid as exc:
        _check_problems(exc, "validate")
        TALLY.add("rejected_with_paths")
        TALLY.add("problems", len(exc.problems))
    except ModakError:
        TALLY.add("refused_by_matcher_or_renderer")
    except Exception as exc:  # pylint: disable=broad-except
        raise Crash("optimise raised %r" % exc) from exc
    else:
        TALLY.add("scripts_" + result.script.scheduler)
        _check_script(result)


def exercise(doc):
    """Load (as JSON and YAML text), validate, match and render one document; count what happened."""
    TALLY.add("documents")
    loaded = [data for data in (_load(text, fmt) for fmt, text in _texts(doc)) if data is not REFUSED]
    _optimise(loaded[0] if loaded else doc)


@settings(FUZZ, max_examples=BUDGET["schema"])
@given(scheduled(from_schema(schema.SCHEMA)))
def fuzz_schema(doc):
    exercise(doc)


@settings(FUZZ, max_examples=BUDGET["mutated"])
@given(scheduled(mutated()))
def fuzz_mutated(doc):
    exercise(doc)


@settings(FUZZ, max_examples=BUDGET["random"])
@given(ANY_JSON | st.fixed_dictionaries({"job": ANY_JSON}) |
       st.fixed_dictionaries({"job": st.fixed_dictionaries({}, optional={
           "job_options": ANY_JSON, "application": ANY_JSON, "target": ANY_JSON, "optimisation": ANY_JSON})}))
def fuzz_random(doc):
    exercise(doc)


@settings(FUZZ, max_examples=BUDGET["text"])
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.sampled_from(HOSTILE),
                 st.lists(st.sampled_from(["{", "}", "[", "]", ":", "job", "&a", "*a", "!!python/object:os.system",
                                           "!!binary", "---", "\n", "  ", "- ", '"', "'", "%YAML 1.1", "<<: *a",
                                           "\x00", "\ufeff", "\u2028", "1e999", "NaN", ",", "#", "2026-02-30",
                                           ".nan", "a: 1\na: 2", '{"a": 1, "a": 2}', "0: x"]),
                          max_size=40).map("".join)),
       st.sampled_from(["auto", "json", "yaml"]))
def fuzz_text(text, fmt):
    TALLY.add("documents")
    data = _load(text, fmt)
    if data is not REFUSED:
        _optimise(data)


@settings(FUZZ, max_examples=BUDGET["recipe"])
@given(mutated(RECIPE_SEEDS, 2),
       st.none() | st.sampled_from(HOSTILE) | st.from_regex(r"^[a-z0-9./:_-]{1,40}$", fullmatch=True))
def fuzz_recipe(doc, base_image):
    TALLY.add("recipes")
    try:
        _recipe, texts = generate.render(recipe_spec.spec_of(dsl.parse(doc)), base_image=base_image)
    except ModakError:
        TALLY.add("recipes_refused")
        return
    except Exception as exc:  # pylint: disable=broad-except
        raise Crash("generate.render raised %r" % exc) from exc
    TALLY.add("recipes_written")
    definition = texts["singularity"][1]
    dockerfile = texts["docker"][1]
    assert sum(1 for line in definition.split("\n") if line.startswith("From:")) == 1
    assert sum(1 for line in dockerfile.split("\n") if line.startswith("FROM ")) == 1
    assert not any(c in definition + dockerfile for c in "\r\x00\x85\u2028\u2029")


@settings(FUZZ, max_examples=BUDGET["directives"])
@given(st.lists(st.sampled_from(HOSTILE) | st.text(max_size=40) |
                st.sampled_from(["#SBATCH --job-name=a", "#PBS -N b", "#PBS -l select=1", "#!/bin/bash", "", "  ",
                                 "#SBATCH", "#SBATCH\t-J x # c", "echo hi", "#PBS -o /x"]), max_size=12))
def fuzz_directive_parser(lines):
    """The batch_job module reads directives back from scripts (scheduler detection, job name)."""
    TALLY.add("directive_texts")
    text = "\n".join(lines)
    try:
        for prefix in ("#SBATCH", "#PBS"):
            words = submission.directive_words(text, prefix)
            assert all(isinstance(w, str) and w and not any(c.isspace() for c in w) for w in words)
            submission.option_value(words, ("--job-name",), ("-J", "-N"))
        scheduler = registry.detect(text)
    except AssertionError:
        raise
    except Exception as exc:  # pylint: disable=broad-except
        raise Crash("the directive reader raised %r" % exc) from exc
    assert scheduler in registry.NAMES


# ---------------------------------------------------------------- one test per property

def run_property(name, prop):
    """Run one property with a fresh tally; a failure (shrunk by Hypothesis) fails the test and is counted."""
    TALLY.reset()
    try:
        prop()
    except Exception:
        record("fuzz", **{"crashes": 1, "documents_" + name: TALLY.counts.get("documents", 0)})
        raise
    counts = dict(TALLY.counts)
    paths = _lint(TALLY.scripts)
    valid = sum(counts.get("scripts_" + s, 0) for s in SCHEDULERS)
    rejected = (counts.get("rejected_with_paths", 0) + counts.get("rejected_at_load", 0) +
                counts.get("refused_by_matcher_or_renderer", 0))
    record("fuzz", documents=counts.get("documents", 0), documents_valid=valid, documents_rejected=rejected,
           recipes=counts.get("recipes", 0), directive_texts=counts.get("directive_texts", 0),
           scripts_linted=len(paths[0]), lint_failures=len(paths[1]),
           **{"documents_" + name: counts.get("documents", counts.get("recipes", counts.get("directive_texts", 0)))})
    print(name, json.dumps(counts, sort_keys=True))
    assert not paths[1], paths[1][:3]
    return counts


def _lint(scripts):
    """Every distinct accepted script passes bash -n and shellcheck; returns (paths, failures)."""
    folder = tempfile.mkdtemp(prefix="modak-fuzz-")
    paths = []
    for index, text in enumerate(sorted(scripts)):
        path = os.path.join(folder, "s%05d.sh" % index)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        paths.append(path)
    failures = [p for p in paths if not bash_n(p)[0]] + list(shellcheck_many(paths).values())
    return paths, failures


def test_fuzz_schema_documents():
    counts = run_property("schema", fuzz_schema)
    assert counts["documents"] >= BUDGET["schema"]


def test_fuzz_mutated_examples():
    counts = run_property("mutated", fuzz_mutated)
    assert counts["documents"] >= BUDGET["mutated"]
    assert all(counts.get("scripts_" + s, 0) > 0 for s in SCHEDULERS), counts


def test_fuzz_random_documents():
    counts = run_property("random", fuzz_random)
    assert counts["documents"] >= BUDGET["random"]
    assert counts.get("rejected_with_paths", 0) > 1000


def test_fuzz_random_text():
    counts = run_property("text", fuzz_text)
    assert counts["documents"] >= BUDGET["text"]


def test_fuzz_recipes():
    counts = run_property("recipe", fuzz_recipe)
    assert counts["recipes"] >= BUDGET["recipe"] and counts.get("recipes_written", 0) > 0


def test_fuzz_directive_reader():
    counts = run_property("directives", fuzz_directive_parser)
    assert counts["directive_texts"] >= BUDGET["directives"]
