"""The test tiers: a test's folder gives its tier unless the test names another (tests/conftest.py), and
scripts/test --tier runs one tier."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import time

import pytest
from helpers import ROOT


def _load_top_conftest():
    """tests/conftest.py itself: ``import conftest`` may name another folder's conftest in a whole-suite run."""
    spec = importlib.util.spec_from_file_location("modak_tests_conftest", os.path.join(ROOT, "tests", "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _load_top_conftest()


def test_the_folder_gives_the_tier():
    assert conftest.tier_of("tests/unit/recipe/test_writers.py") == "unit"
    assert conftest.tier_of("tests/integration/slurm/test_readback.py") == "integration"
    assert conftest.tier_of("tests/robustness/test_fuzz.py") == "robustness"
    assert conftest.tier_of("tests/lint/test_collection_lint.py") == "lint"


def test_a_marked_tier_wins_over_the_folder():
    assert conftest.tier_of("tests/unit/test_cli.py", ("parametrize", "lint")) == "lint"


def test_every_tier_is_a_registered_marker(pytestconfig):
    registered = " ".join(pytestconfig.getini("markers"))
    assert all("%s:" % tier in registered for tier in conftest.TIERS)


def test_scripts_test_refuses_an_unknown_tier():
    done = subprocess.run([os.path.join(ROOT, "scripts", "test"), "--tier", "everything"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2 and "unknown tier 'everything'" in done.stderr


@pytest.mark.integration   # two pytest runs in subprocesses: seconds, so not in the unit tier it checks
def test_scripts_test_spreads_over_the_cores_and_shows_the_slowest_unless_told():
    """scripts/test adds pytest-xdist's -n auto --dist loadgroup and --durations=30; -n and --durations given win;
    it ends with the total time."""
    argv = [os.path.join(ROOT, "scripts", "test"), "--tier", "unit", os.path.join("tests", "unit", "test_versions.py"),
            "-k", "span", "-q"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0 and "bringing up nodes" in done.stdout, done.stdout
    assert "slowest 30 durations" in done.stdout and "s of pytest)" in done.stdout, done.stdout
    done = subprocess.run(argv + ["-n", "0", "--durations=2"], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0 and "bringing up nodes" not in done.stdout, done.stdout
    assert "slowest 2 durations" in done.stdout, done.stdout


@pytest.mark.integration   # a pytest run in a subprocess: seconds
def test_a_hanging_test_fails_with_its_stack_and_the_run_goes_on(tmp_path):
    """The suite's configuration (pyproject.toml) ends a test that runs past its timeout (pytest-timeout): the test
    fails naming the timeout, the program it waited on is stopped, and the tests after it still run, under xdist
    as in scripts/test. CI's run that hung at 99% ended only at CI's limit, with no test named."""
    (tmp_path / "test_hang.py").write_text(
        "import subprocess\n"
        "def test_hangs():\n"
        "    subprocess.run(['sleep', '60'], capture_output=True)\n"
        "def test_after():\n"
        "    pass\n")
    argv = [os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pytest", "-c", os.path.join(ROOT, "pyproject.toml"),
            "--rootdir", str(tmp_path), str(tmp_path / "test_hang.py"), "-n", "2", "-p", "no:cacheprovider",
            "-o", "timeout=2", "-ra"]
    done = subprocess.run(argv, cwd=str(tmp_path), capture_output=True, text=True, check=False, timeout=50)
    assert done.returncode == 1, done.stdout
    assert "FAILED" in done.stdout and "test_hangs - Failed: Timeout (>2.0s)" in done.stdout, done.stdout
    assert "1 failed, 1 passed" in done.stdout, done.stdout


@pytest.mark.integration   # a pytest run in a subprocess: seconds
def test_a_test_that_leaves_a_signal_handler_behind_fails_and_the_next_test_has_the_old_one(tmp_path):
    """tests/conftest.py's signal_handlers_kept: a test that replaces SIGTERM's handler for good fails, and the
    test after it in the same process finds the handler it would have had."""
    (tmp_path / "test_handlers.py").write_text(
        "import signal\n"
        "def test_replaces():\n"
        "    signal.signal(signal.SIGTERM, lambda number, frame: None)\n"
        "def test_after():\n"
        "    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "tests"), os.path.join(ROOT, "collections")]))
    argv = [os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pytest", "-p", "conftest", "-c",
            os.path.join(ROOT, "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path / "test_handlers.py"),
            "-p", "no:cacheprovider", "-p", "no:xdist", "-ra"]
    done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False, timeout=60)
    assert "the test left its own handler for SIGTERM behind" in done.stdout, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout, done.stdout     # test_replaces: its call passed, its teardown not


def test_a_tests_limit_never_runs_past_the_runs_deadline():
    assert conftest.capped_timeout(900, None, 1000.0) == 900
    assert conftest.capped_timeout(900, 1000.0 + 60, 1000.0) == 60
    assert conftest.capped_timeout(30, 1000.0 + 60, 1000.0) == 30
    assert conftest.capped_timeout(0, 1000.0 + 60, 1000.0) == 60       # no limit of its own: the deadline's
    assert conftest.capped_timeout(900, 1000.0 - 5, 1000.0) == 1        # past it: a second, then the summary


@pytest.mark.integration   # a pytest run in a subprocess: seconds
def test_near_the_deadline_a_long_test_fails_on_time_and_the_run_ends_with_its_summary(tmp_path):
    """MODAK_TEST_DEADLINE (scripts/test: 84 minutes after it started): a test's own 15-minute limit is cut to what
    is left, so a slow run still ends with pytest's summary before CI's 90 minutes."""
    (tmp_path / "test_late.py").write_text(
        "import subprocess\n"
        "def test_slow():\n"
        "    subprocess.run(['sleep', '60'], capture_output=True)\n")
    env = dict(os.environ, MODAK_TEST_DEADLINE=str(int(time.time()) + 4),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "tests"), os.path.join(ROOT, "collections")]))
    argv = [os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pytest", "-p", "conftest", "-c",
            os.path.join(ROOT, "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path / "test_late.py"),
            "-p", "no:cacheprovider", "-p", "no:xdist", "-ra"]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 1 and "Failed: Timeout" in done.stdout, done.stdout + done.stderr
    assert time.monotonic() - started < 30


def test_the_run_reports_its_time_by_tier_group_and_worker():
    times = conftest.RunTimes()

    class Report(object):
        def __init__(self, nodeid, keywords, duration, worker):
            self.nodeid, self.keywords, self.duration = nodeid, keywords, duration
            self.node = type("Node", (), {"gateway": type("Gateway", (), {"id": worker})()})()
            self.start, self.stop = 0.0, duration

    times.pytest_runtest_logreport(Report("tests/unit/test_a.py::test_x[user@host]", {"unit": 1}, 2.0, "gw0"))
    times.pytest_runtest_logreport(Report("tests/integration/demo/test_q.py::test_y@modak-demo.ch",
                                          {"integration": 1}, 630.0, "gw1"))
    lines = times.lines(workers=2)
    assert any(line.startswith("group  (none)") and "2.0 s" in line for line in lines), lines
    assert any(line.startswith("group  modak-demo.ch") and "630.0 s  30.0 %" in line for line in lines), lines
    assert any(line.startswith("tier   integration") and "15.0 %" in line for line in lines), lines
    assert any(line.startswith("worker gw1") and "30.0 %" in line for line in lines), lines
