"""Requests that match real centres: the scripts HPC centres publish (tests/data/centres) against modak's script
for the DSL document that asks for the same thing, fact by fact (nodes, tasks, tasks per node, CPUs per task,
GPUs and their model, memory, time, partition, array, placement). Every difference left is named in the manifest
with its reason; docs/scheduler.md shows the figures, checked here."""

from __future__ import annotations

import os

import centres
import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline

IDS = [entry["name"] for entry in centres.SCRIPTS]


def modak_script(entry, catalog):
    return pipeline.optimise(centres.document(entry), catalog).script.text


def test_the_corpus_has_twenty_scripts_or_more_of_several_centres_and_schedulers():
    assert len(centres.SCRIPTS) >= 20
    assert len(set(e["centre"] for e in centres.SCRIPTS)) >= 6
    assert set(centres.scheduler_of(e) for e in centres.SCRIPTS) == {"slurm", "pbspro", "gridengine"}
    for entry in centres.SCRIPTS:
        assert os.path.exists(centres.path(entry)), entry["name"]
        source = centres.MANIFEST["sources"][entry["source"]]
        assert set(source) == {"repo", "commit", "path"} and len(source["commit"]) == 40
        assert centres.source_url(entry).startswith("https://github.com/%s/blob/" % source["repo"])


@pytest.mark.parametrize("entry", centres.SCRIPTS, ids=IDS)
def test_the_reading_of_the_centres_script_is_the_manifests(entry):
    """The facts read from the centre's directives are the ones written down by hand in the manifest."""
    with open(centres.path(entry)) as handle:
        assert centres.facts(centres.scheduler_of(entry), handle.read()) == entry["facts"]


@pytest.mark.parametrize("entry", centres.SCRIPTS, ids=IDS)
def test_modak_asks_what_the_centre_asks(entry, catalog):
    """Every fact matches, or the manifest names the difference and why (and no listed difference is gone)."""
    mine = centres.facts(centres.scheduler_of(entry), modak_script(entry, catalog))
    differs = centres.compare(entry["facts"], mine)
    assert sorted(differs) == sorted(entry.get("differences", {})), differs


def figures_table(catalog):
    table, total = centres.figures(lambda entry: modak_script(entry, catalog))
    lines = ["| centre | scripts | facts compared | facts that match | share |", "| --- | --- | --- | --- | --- |"]
    for centre, scripts, compared, matched in table + [total]:
        lines.append("| %s | %d | %d | %d | %.0f %% |"
                     % (centre, scripts, compared, matched, 100.0 * matched / compared))
    return "\n".join(lines), total


def test_the_figures_in_the_docs_are_todays(catalog):
    text, total = figures_table(catalog)
    assert total[3] >= 0.9 * total[2]
    with open(os.path.join(ROOT, "docs", "scheduler.md")) as handle:
        docs = handle.read()
    assert text in docs, "docs/scheduler.md should hold:\n" + text
