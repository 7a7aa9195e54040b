"""The conformance corpus: every document of the original MODAK gets the verdict its manifest gives, and the
original's expected scripts differ from modak's only where the manifest says why."""

from __future__ import annotations

import copy
import re

import pytest

import corpus
from helpers import load

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid


def test_manifest_lists_every_corpus_document_once():
    assert sorted(corpus.MANIFEST) == corpus.files()
    for name, entry in corpus.MANIFEST.items():
        assert entry["verdict"] in ("accepted", "rejected"), name
        assert entry["original"] in ("accepted", "rejected"), name
        assert entry.get("why"), name
        assert (entry["verdict"] == "rejected") == bool(entry.get("problems")), name


def problem_paths(name, catalog):
    """[] when modak accepts the document (through the whole pipeline), else the DSL paths of its problems."""
    try:
        pipeline.optimise(load(corpus.path(name)), catalog)
    except DslInvalid as exc:
        return sorted({p.path or "(document)" for p in exc.problems})
    return []


@pytest.mark.parametrize("name,entry", corpus.cases())
def test_corpus_document_gets_its_verdict(name, entry, catalog):
    found = problem_paths(name, catalog)
    if entry["verdict"] == "accepted":
        assert found == []
    elif entry["exact"]:
        assert found == sorted(entry["problems"])
    else:
        assert set(entry["problems"]) <= set(found), found


def test_corpus_figures_match_the_manifest(catalog):
    """The figures docs/scheduler.md gives: accepted today = accepted in the manifest minus the open defects."""
    accepted = sorted(n for n in corpus.MANIFEST if not problem_paths(n, catalog))
    pending = sorted(n for n, e in corpus.MANIFEST.items() if e["verdict"] == "accepted" and e.get("defects"))
    meant = sorted(n for n, e in corpus.MANIFEST.items() if e["verdict"] == "accepted")
    assert set(accepted) <= set(meant)
    assert set(meant) - set(accepted) <= set(pending)


# ------------------------------------------------------------------ directive by directive

SLURM_NAMES = {"-J": "job-name", "-N": "nodes", "-n": "ntasks", "-t": "time", "-o": "output", "-e": "error",
               "-error": "error", "-p": "partition", "-A": "account", "-c": "cpus-per-task"}


def slurm_options(lines):
    out = {}
    for line in lines:
        match = re.match(r"^#SBATCH\s+(-{1,2}[A-Za-z-]+)(?:[= ](.*))?$", line.strip())
        if match:
            key = SLURM_NAMES.get(match.group(1), match.group(1).lstrip("-"))
            value = (match.group(2) or "").strip()
            out[key] = _seconds(value) if key == "time" else value
    return out


def pbs_options(lines):
    out = {}
    for line in lines:
        match = re.match(r"^#PBS\s+(\S+)(?:\s+(.*))?$", line.strip())
        if not match:
            continue
        flag, value = match.group(1), (match.group(2) or "").strip()
        if flag == "-l":
            for resource in value.split(","):
                key, _sep, val = resource.partition("=")
                out["-l " + key] = _seconds(val) if key == "walltime" else val
        else:
            out[flag] = value
    return out


def _seconds(text):
    parts = [int(p) for p in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


def adjusted(doc, changes):
    doc = copy.deepcopy(doc)
    for dotted, value in (changes or {}).items():
        node = doc
        keys = dotted.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = " ".join(value.split()) if dotted.endswith("arguments") else value
    return doc


@pytest.mark.parametrize("case", corpus.MANIFEST_COMPARISONS, ids=lambda c: c["script"])
def test_expected_script_differs_only_where_the_manifest_says_why(case, catalog):
    doc = adjusted(load(corpus.path(case["document"])), case.get("adjust"))
    result = pipeline.optimise(doc, catalog)
    with open(corpus.path(case["script"])) as stream:
        original = stream.read().splitlines()
    parse = slurm_options if result.script.directives[0].startswith("#SBATCH") else pbs_options
    theirs, ours = parse(original), parse(result.script.directives)
    differing = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
    unexplained = [(k, theirs.get(k), ours.get(k)) for k in differing if k not in case.get("differences", {})]
    assert unexplained == []
    stale = [k for k in case.get("differences", {}) if k not in differing]   # a reason for what no longer differs
    assert stale == []
