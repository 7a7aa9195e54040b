"""Version semantics: components, not text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers import ai_doc

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.versions import VersionRequest, parse


@pytest.mark.parametrize("request_text,version,matches", [
    ("2.1", "2.1.0", True), ("2.1", "2.1.7", True), ("2.1", "2.10.1", False), ("2.1", "2.11", False),
    ("2", "2.15.1", True), ("2", "1.15.5", False), ("2.1.3", "2.1.3", True), ("2.1.3", "2.1.4", False),
    (">=2.4,<2.10", "2.8.0", True), (">=2.4,<2.10", "2.10.1", False), (">=2.4,<2.10", "2.1.0", False),
    ("==2.1", "2.1.0", True), ("==2.1", "2.1.1", False), ("latest", "0.1", True), (None, "9.9", True),
    (">2.1", "2.1.0", False), ("<=2.1", "2.1.0", True),
    # PEP 440 (packaging.specifiers): ~=2.4 is >=2.4,==2.*; ==2.4.* the 2.4 line; != excludes
    ("~=2.4", "2.5.1", True), ("~=2.4", "2.4.0", True), ("~=2.4", "3.0", False), ("~=2.4", "2.3.9", False),
    ("~=2.4.1", "2.4.7", True), ("~=2.4.1", "2.5.0", False), ("~=2.4.1", "2.4.0", False),
    ("==2.4.*", "2.4.3", True), ("==2.4.*", "2.40", False), ("==2.4.*", "2.5", False),
    ("2.4.*", "2.4.3", True), ("2.4.*", "2.5", False), ("!=2.4.*", "2.4.3", False), ("!=2.4.*", "2.5.1", True),
    ("!=2.5", "2.5.0", False), ("!=2.5", "2.5.1", True), (">=2.4,!=2.5.*,<3", "2.6", True),
    (">=2.4,!=2.5.*,<3", "2.5.2", False), ("v2.1", "2.1.4", True), ("~= v2.4", "2.9", True),
])
def test_matches(request_text, version, matches):
    assert VersionRequest(request_text).matches(parse(version)) is matches


@pytest.mark.parametrize("bad", ["2.x", "two", "2..1", ">= 2, foo", "~=2", ">=2.4.*", "~=2.4.*", "2.*.1", "===2.4"])
def test_bad_requests(bad):
    with pytest.raises(ValueError):
        VersionRequest(bad)


def test_release_line():
    assert VersionRequest("2").line_of((2, 15, 1)) == (2, 15)
    assert VersionRequest("2.1").line_of((2, 1, 7)) == (2, 1)
    assert VersionRequest("2.1.3").line_of((2, 1, 3)) == (2, 1, 3)
    assert VersionRequest(None).line_of((2, 15, 1)) == (2, 15)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 12)] * 3).map(lambda v: v[:1 + v[0] % 3]), max_size=40),
       st.sampled_from(["2", "2.1", "1.10.3", "=3", "2.0.*", "==2.1.*", "0", "12.12"]))
def test_the_span_of_a_pinned_prefix_is_exactly_the_versions_that_match(found, text):
    ordered = sorted(set(found))
    request = VersionRequest(text)
    lo, hi = request.span(ordered)
    assert ordered[lo:hi] == [v for v in ordered if request.matches(v)]


def test_requests_other_than_one_pinned_prefix_have_no_span():
    for text in ("", "latest", ">=2.4", ">=2.4,<2.10", "==2.1", "<3", "~=2.4", "!=2.4.*"):
        assert VersionRequest(text).span([(2, 1), (2, 4)]) is None


@pytest.mark.parametrize("text,prefix", [("2.4", (2, 4)), ("2.4.*", (2, 4)), ("==2.4.*", (2, 4)), ("=3", (3,)),
                                         ("==2.4", (2, 4)), ("~=2.4", None), (">=2.4,<3", None), ("!=2.4", None)])
def test_the_pinned_prefix(text, prefix):
    assert VersionRequest(text).prefix == prefix


def test_compatible_release_chooses_what_its_range_chooses(catalog):
    """~=2.4 is PEP 440's >=2.4,==2.*: the matcher picks the image it picks for >=2.4,<3 (the newest 2.x line of
    the catalog's CPU TensorFlow, 2.15), not 2.4.0 as a prefix would."""
    chosen = {text: pipeline.optimise(ai_doc("tensorflow", text), catalog).choice.image
              for text in ("~=2.4", ">=2.4,<3", "2.4")}
    assert chosen["~=2.4"].name == chosen[">=2.4,<3"].name
    assert chosen["~=2.4"].version[:2] == (2, 15)
    assert chosen["2.4"].version[:2] == (2, 4)          # a bare version keeps its prefix meaning


@pytest.mark.parametrize("text", ["2.4.*", "==2.4.*", "~=2.4", "!=2.5", ">=2.4,!=2.5.*,<3", "~=2.4.1"])
def test_the_dsl_takes_pep_440_clauses(text):
    assert dsl.problems(ai_doc("tensorflow", text)) == []


@pytest.mark.parametrize("text", ["~=2", ">=2.4.*", "2.x"])
def test_the_dsl_refuses_what_pep_440_refuses_at_the_version_path(text):
    paths = [p.path for p in dsl.problems(ai_doc("tensorflow", text))]
    assert paths == ["job.optimisation.app_type-ai_training.ai_framework-tensorflow.version"]
