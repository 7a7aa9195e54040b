"""perf_model reports: only inside output_dir, never through a link, atomically."""

from __future__ import annotations

import os

import pytest

from perf_records import records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.perf import report


def listing(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _dirs, fs in os.walk(root) for f in fs)


@pytest.mark.parametrize("prefix", ["../escaped", "sub/../../escaped", "/tmp/abs", "..", "a/b"])
def test_a_prefix_that_leaves_output_dir_is_refused_before_writing(tmp_path, records, prefix):
    out = tmp_path / "a" / "out"
    with pytest.raises(OutputError):
        report.write(records, str(out), prefix=prefix)
    assert [p for p in listing(str(tmp_path)) if not p.startswith("a/out/")] == []


def test_a_planted_link_is_not_followed(tmp_path, records):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(str(victim), str(out / "perf-report.md"))
    with pytest.raises(OutputError):
        report.write(records, str(out))
    assert victim.read_text() == "keep"


def fake_summary(records, hw_class=None, load=0.0):
    """What the report says, without fitting the model (tests/unit/perf/test_model.py fits it)."""
    return {"runs": len(records), "hw_class": hw_class, "load": load}


def fake_plots(data, directory=None, prefix="perf"):
    """The report's two PNGs, their bytes following the data, without drawing."""
    del directory
    text = repr(sorted(data.items())).encode("utf-8")
    return {"%s-predicted-vs-measured.png" % prefix: b"\x89PNG" + text, "%s-ranking.png" % prefix: b"\x89PNG" + text}


def test_a_failed_run_leaves_the_previous_report_intact(tmp_path, records, monkeypatch):
    """Every file is written atomically and the report last: a run that fails while rendering leaves the previous
    report and plots as they were (the summary and the plots are stand-ins: only the writing is under test)."""
    monkeypatch.setattr(report, "summary", fake_summary)
    monkeypatch.setattr(report, "plots", fake_plots)
    monkeypatch.setattr(report, "markdown", lambda data: "# %(runs)d runs\n" % data)
    out = tmp_path / "out"
    report.write(records, str(out))
    before = dict((name, (out / name).read_bytes()) for name in os.listdir(str(out)))

    def broken(_data):
        raise RuntimeError("disk full while rendering")
    monkeypatch.setattr(report, "markdown", broken)
    with pytest.raises(RuntimeError):
        report.write(records[:len(records) // 2], str(out))
    assert dict((name, (out / name).read_bytes()) for name in os.listdir(str(out))) == before
