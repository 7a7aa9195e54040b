"""Version semantics: components, not text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.sodalite.modak.plugins.module_utils.versions import VersionRequest, parse


@pytest.mark.parametrize("request_text,version,matches", [
    ("2.1", "2.1.0", True), ("2.1", "2.1.7", True), ("2.1", "2.10.1", False), ("2.1", "2.11", False),
    ("2", "2.15.1", True), ("2", "1.15.5", False), ("2.1.3", "2.1.3", True), ("2.1.3", "2.1.4", False),
    (">=2.4,<2.10", "2.8.0", True), (">=2.4,<2.10", "2.10.1", False), (">=2.4,<2.10", "2.1.0", False),
    ("==2.1", "2.1.0", True), ("==2.1", "2.1.1", False), ("latest", "0.1", True), (None, "9.9", True),
    (">2.1", "2.1.0", False), ("<=2.1", "2.1.0", True),
])
def test_matches(request_text, version, matches):
    assert VersionRequest(request_text).matches(parse(version)) is matches


@pytest.mark.parametrize("bad", ["2.x", "two", "2..1", ">= 2, foo"])
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
       st.sampled_from(["2", "2.1", "1.10.3", "=3", "~=2.0", "0", "12.12"]))
def test_the_span_of_a_pinned_prefix_is_exactly_the_versions_that_match(found, text):
    ordered = sorted(set(found))
    request = VersionRequest(text)
    lo, hi = request.span(ordered)
    assert ordered[lo:hi] == [v for v in ordered if request.matches(v)]


def test_requests_other_than_one_pinned_prefix_have_no_span():
    for text in ("", "latest", ">=2.4", ">=2.4,<2.10", "==2.1", "<3"):
        assert VersionRequest(text).span([(2, 1), (2, 4)]) is None
