"""Shared fixtures; the helpers live in tests/helpers.py (tests import them as `helpers`)."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from helpers import ROOT  # noqa: E402  pylint: disable=wrong-import-position
import services  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog  # noqa: E402


KEPT_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@pytest.fixture(autouse=True)
def signal_handlers_kept():
    """Every test leaves SIGTERM's and SIGINT's handlers as it found them, or fails (and they are put back). A handler
    left behind outlives the test in its worker: ansible_runner.run without a cancel callback installs one that only
    sets a flag, and a later test's forked children then ignored SIGTERM, so multiprocessing's Pool.terminate()
    waited for ever (a CI run hung at 99 %)."""
    before = {number: signal.getsignal(number) for number in KEPT_SIGNALS}
    yield
    changed = [signal.Signals(number).name for number, handler in before.items()
               if signal.getsignal(number) != handler]
    for number in changed:
        signal.signal(signal.Signals[number], before[signal.Signals[number]])
    assert not changed, "the test left its own handler for %s behind" % ", ".join(changed)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def catalog():
    return ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))


# the tiers: a test's folder gives its tier unless it is marked with another (scripts/test --tier <tier>)
TIERS = {
    "unit": "fast tests of the code itself, no service and no subprocess of the tool chain (tests/unit)",
    "integration": "real services, ansible-playbook runs, image builds (tests/integration)",
    "robustness": "hostile input, faults, fuzzing and linear time (tests/robustness)",
    "lint": "ansible-test sanity, ansible-lint, ansible-doc, pre-commit and other checkers (tests/lint)",
}


def pytest_configure(config):
    for tier, description in TIERS.items():
        config.addinivalue_line("markers", "%s: %s" % (tier, description))
    config.pluginmanager.register(FixtureTimes(), "modak-fixture-times")
    config.pluginmanager.register(RunTimes(), "modak-run-times")


def tier_of(path, marked=()):
    """The tier of a test in ``path`` (relative to the repository) with the tier markers ``marked``."""
    marked = [m for m in marked if m in TIERS]
    if marked:
        return marked[0]
    parts = path.replace(os.sep, "/").split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" and parts[1] in TIERS else "unit"


@pytest.hookimpl(tryfirst=True)      # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Every test gets its folder's tier marker, unless it names its tier itself, and its xdist group."""
    del config
    for item in items:
        marked = [mark.name for mark in item.iter_markers() if mark.name in TIERS]
        if not marked:
            item.add_marker(getattr(pytest.mark, tier_of(os.path.relpath(str(item.fspath), ROOT))))
        group = services.group_of(getattr(item, "fixturenames", ()))
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: services.order_key(os.path.relpath(str(item.fspath), ROOT)))


# The run's hard deadline: scripts/test exports MODAK_TEST_DEADLINE (seconds since the epoch), a few minutes before
# CI's limit. A test's timer (pytest-timeout: its own `timeout` mark, or the configured default) never runs past it,
# so a run that goes wrong still ends with pytest's summary; the configured session_timeout starts no test after the
# time a test still has to run.
DEADLINE_VAR = "MODAK_TEST_DEADLINE"


def timeout_of(item):
    """The per-test timeout pytest-timeout would give ``item`` (its closest `timeout` mark, else the ini value)."""
    mark = item.get_closest_marker("timeout")
    if mark is not None and (mark.args or "timeout" in mark.kwargs):
        return float(mark.args[0] if mark.args else mark.kwargs["timeout"])
    value = item.config.getini("timeout")
    return float(value) if value else 0.0


def capped_timeout(own, deadline, now):
    """``own`` (0: none), shortened to what is left before ``deadline`` (None: no deadline); at least 1 s."""
    if deadline is None:
        return own
    left = max(1.0, deadline - now)
    return left if own <= 0 else min(own, left)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)    # outside pytest-timeout's own wrapper, which reads the mark
def pytest_runtest_protocol(item, nextitem):
    del nextitem
    deadline = os.environ.get(DEADLINE_VAR)
    if deadline:
        own = timeout_of(item)
        capped = capped_timeout(own, float(deadline), time.time())
        if capped != own:
            item.add_marker(pytest.mark.timeout(capped), append=False)
    yield


# what each tier, group and folder of a run cost (printed at the end, with each one's share of the suite's budget)
BUDGET_S = 35 * 60


class RunTimes(object):
    """Adds up each test's setup, call and teardown by tier, by xdist group (one worker runs a group in turn), by
    folder and by worker, on the process that prints the summary."""

    def __init__(self):
        self.rows = {"tier": {}, "group": {}, "folder": {}, "worker": {}}
        self.first = None
        self.last = None

    def pytest_runtest_logreport(self, report):
        # xdist's loadgroup ends a grouped test's id with @<group>; a parameter's id may hold an @ of its own
        head, sep, tail = report.nodeid.rpartition("@")
        nodeid, group = (head, tail) if sep and tail in services.GROUPS else (report.nodeid, "")
        path = nodeid.split("::")[0]
        tier = next((name for name in TIERS if name in report.keywords), tier_of(path))
        worker = getattr(getattr(report, "node", None), "gateway", None)
        keys = {"tier": tier, "group": group or "(none)", "folder": os.path.dirname(path) or ".",
                "worker": worker.id if worker is not None else "main"}
        for kind, key in keys.items():
            seconds, tests = self.rows[kind].get(key, (0.0, set()))
            tests.add(nodeid)
            self.rows[kind][key] = (seconds + report.duration, tests)
        start, stop = getattr(report, "start", None), getattr(report, "stop", None)
        if start is not None:
            self.first = start if self.first is None else min(self.first, start)
            self.last = stop if self.last is None else max(self.last, stop)

    def lines(self, workers, top=12):
        """The report's lines: each kind's rows, the costliest first (at most ``top`` groups and folders)."""
        capacity = BUDGET_S * max(1, workers)
        out = ["tests' time (setup, call and teardown); the share is of the %d-minute budget: of one worker's for a "
               "worker and a group (a group runs on one worker, in turn), of all %d workers' for a tier and a folder"
               % (BUDGET_S // 60, max(1, workers))]
        if self.first is not None:
            out.append("wall time from the first test's start to the last one's end: %.0f s (%.0f %% of %d min)"
                       % (self.last - self.first, 100.0 * (self.last - self.first) / BUDGET_S, BUDGET_S // 60))
        for kind in ("tier", "worker", "group", "folder"):
            rows = sorted(self.rows[kind].items(), key=lambda kv: -kv[1][0])
            shown = rows if kind in ("tier", "worker") else rows[:top]
            for key, (seconds, tests) in shown:
                share = 100.0 * seconds / (BUDGET_S if kind in ("worker", "group") else capacity)
                out.append("%-6s %-58s %5d tests %8.1f s %5.1f %%" % (kind, key[:58], len(tests), seconds, share))
        return out

    def pytest_terminal_summary(self, terminalreporter):
        if not self.rows["tier"] or not terminalreporter.config.getoption("durations", None):
            return
        workers = len([key for key in self.rows["worker"] if key != "main"]) or 1
        terminalreporter.write_sep("=", "time by tier, worker, group and folder")
        for line in self.lines(workers):
            terminalreporter.write_line(line)


# the slowest fixtures of a run (`make test` prints them after pytest's slowest tests): each fixture's own setup
# time, reported with the test that set it up (in user_properties, which pytest-xdist brings to the controller). A
# plugin rather than hooks of this file: a session fixture's setup calls only the hooks that apply to the whole run.
class FixtureTimes(object):
    PROPERTY = "modak_fixture_setup"
    SLOWEST = 30
    AT_LEAST_S = 0.5

    def __init__(self):
        self.running = []
        self.times = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        self.running.append(item)
        yield
        self.running.pop()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef):
        started = time.monotonic()
        yield
        took = time.monotonic() - started
        if self.running and took >= self.AT_LEAST_S:
            self.running[-1].user_properties.append(
                (self.PROPERTY, "%s %s %.2f" % (fixturedef.argname, fixturedef.scope, took)))

    def pytest_runtest_logreport(self, report):
        for name, value in getattr(report, "user_properties", ()):
            if name == self.PROPERTY and report.when == "setup":
                fixture, scope, seconds = value.split(" ")
                key = (fixture, scope, report.nodeid.split("@")[0])
                self.times[key] = self.times.get(key, 0.0) + float(seconds)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.times or not terminalreporter.config.getoption("durations", None):
            return
        terminalreporter.write_sep("=", "slowest %d fixture set-ups" % self.SLOWEST)
        for (fixture, scope, nodeid), seconds in sorted(self.times.items(), key=lambda kv: -kv[1])[:self.SLOWEST]:
            terminalreporter.write_line("%.2fs %s (%s) for %s" % (seconds, fixture, scope, nodeid))


def _figures():
    sys.path.insert(0, os.path.join(ROOT, "tests", "robustness"))
    import figures  # pylint: disable=import-outside-toplevel
    return figures


def pytest_sessionstart(session):
    """The robustness counters start empty on every run (on the controller when tests run in parallel)."""
    # a run started by a test (PYTEST_CURRENT_TEST is set) must not empty the counters the outer run is filling
    if not hasattr(session.config, "workerinput") and "PYTEST_CURRENT_TEST" not in os.environ:
        _figures().reset()


def pytest_sessionfinish(session, exitstatus):
    """Write tests/output/robustness.json; docs/robustness.md is regenerated from it by scripts/robustness_report.py
    (tests never rewrite tracked files)."""
    del exitstatus
    if not hasattr(session.config, "workerinput"):
        figures = _figures()
        found = figures.collect()
        if found:
            figures.write(found)
