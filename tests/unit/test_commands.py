"""The one command runner: C locale, timeout, the command's own words in errors; a module backs it with run_command."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.commands import ModuleRunner, ProcessRunner
from ansible_collections.sodalite.modak.plugins.module_utils.errors import (
    CommandError, CommandTimeout, ModakError, SchedulerTimeout, SubmitError)


class FakeModule(object):
    """Records what run_command got and answers from a fixed (rc, out, err)."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def run_command(self, args, **kwargs):
        self.calls.append((args, kwargs))
        return self.answer


def test_process_runner_forces_the_c_locale(monkeypatch):
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    rc, out, _err = ProcessRunner().run(["sh", "-c", 'echo "$LANG $LC_ALL"'])
    assert (rc, out) == (0, "C C\n")


def test_process_runner_errors_carry_the_command():
    runner = ProcessRunner(timeout=1)
    with pytest.raises(CommandError) as info:
        runner.run(["sh", "-c", "echo nope >&2; exit 3"])
    assert (info.value.rc, "nope" in str(info.value)) == (3, True)
    assert info.value.cmd == ["sh", "-c", "echo nope >&2; exit 3"]
    runner.timeout = 0.1
    with pytest.raises(CommandTimeout):
        runner.run(["sleep", "5"])
    with pytest.raises(CommandError, match="installed and on PATH"):
        runner.run(["/nonexistent/modak-command"])
    assert runner.last == ["/nonexistent/modak-command"] and len(runner.history) == 3


def test_module_runner_uses_run_command_in_the_c_locale_under_a_timeout():
    module = FakeModule((0, "42\n", ""))
    runner = ModuleRunner(module, timeout=8, cwd="/w")
    assert runner.run(["sbatch", "--parsable", "/w/a.sh"]) == (0, "42\n", "")
    args, kwargs = module.calls[0]
    assert args == ["timeout", "--kill-after=5", "8s", "sbatch", "--parsable", "/w/a.sh"]
    assert kwargs["environ_update"] == {"LANG": "C", "LC_ALL": "C"}
    assert kwargs["cwd"] == "/w" and kwargs["check_rc"] is False and kwargs["expand_user_and_vars"] is False
    assert runner.last == ["sbatch", "--parsable", "/w/a.sh"]


@pytest.mark.parametrize("answer,error,words", [
    ((124, "", ""), SchedulerTimeout, "did not answer within 8 s"),
    ((127, "", "timeout: failed to run command 'qsub': No such file or directory"), SubmitError, "on PATH"),
    ((1, "", "qsub: Unknown queue"), SubmitError, "qsub failed (rc 1): qsub: Unknown queue"),
])
def test_module_runner_errors(answer, error, words):
    runner = ModuleRunner(FakeModule(answer), timeout=8, error=SubmitError, timeout_error=SchedulerTimeout)
    with pytest.raises(error) as info:
        runner.run(["qsub", "a.sh"])
    assert words in str(info.value)


def test_one_error_root():
    from ansible_collections.sodalite.modak.plugins.module_utils.perf import store, tune
    for error in (CommandError, CommandTimeout, SubmitError, SchedulerTimeout, store.StoreError, tune.TuneError):
        assert issubclass(error, ModakError)
