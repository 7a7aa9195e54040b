# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to run a command: an argv list in, (rc, stdout, stderr) out, never a shell, always the C locale.

Callers build argv with pure functions (tests compare them exactly) and hand them to a Runner:

- ``ModuleRunner`` backs a module with ``AnsibleModule.run_command`` (what Ansible's own modules use);
- ``ProcessRunner`` runs the command with ``subprocess`` when no module is at hand (the core used as a library);
- tests give a fake with the same ``run`` (``tests/fake_runner.py``: exact argv -> rc, out, err).

Scheduler output is parsed, so every command runs with ``LANG=C LC_ALL=C``. Every command has a timeout, so
that a service that does not answer gives a clear error instead of a hang.
"""

from __future__ import annotations

import os
import subprocess

from ansible_collections.sodalite.modak.plugins.module_utils.errors import CommandError, CommandTimeout

C_LOCALE = {"LANG": "C", "LC_ALL": "C"}
TIMEOUT_RC = 124        # timeout(1): the command ran out of time
NOT_FOUND_RC = 127      # timeout(1) / a shell: the command was not found


def message(out, err):
    """A command's own words: stderr when it said something, else stdout, on one line."""
    text = (err or "").strip() or (out or "").strip() or "no message"
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


class Runner(object):
    """Runs argv lists; remembers each one (``history``, ``last``) so that results can show the command.

    ``error`` and ``timeout_error`` are the exceptions raised (a caller may pass subclasses of
    CommandError and CommandTimeout that name its domain).
    """

    def __init__(self, timeout=30, cwd=None, error=CommandError, timeout_error=CommandTimeout):
        self.timeout = timeout
        self.cwd = cwd
        self.error = error
        self.timeout_error = timeout_error
        self.history = []

    def run(self, argv, check=True, input_text=None):
        """Run argv; with ``check`` a non-zero exit status raises ``error`` with the command's own words."""
        argv = [str(a) for a in argv]
        self.history.append(argv)
        rc, out, err = self.execute(argv, input_text)
        if check and rc != 0:
            raise self.error("%s failed (rc %d): %s" % (argv[0], rc, message(out, err)),
                             cmd=argv, rc=rc, stdout=out, stderr=err)
        return rc, out, err

    def execute(self, argv, input_text=None):
        """Return (rc, stdout, stderr); raise ``timeout_error`` or ``error`` when the command cannot run."""
        raise NotImplementedError

    def not_found(self, argv, why):
        return self.error("cannot run %s: %s (is the scheduler's client installed and on PATH?)" % (argv[0], why),
                          cmd=argv)

    def too_slow(self, argv, out="", err=""):
        return self.timeout_error("the scheduler did not answer within %s s: %s" % (self.timeout, " ".join(argv)),
                                  cmd=argv, stdout=out, stderr=err)

    def record(self, argv):
        """Remember a command that was started some other way (a detached process)."""
        self.history.append([str(a) for a in argv])

    @property
    def last(self):
        return self.history[-1] if self.history else []


class ProcessRunner(Runner):
    """The runner of the core used without Ansible: subprocess, C locale, timeout."""

    def __init__(self, timeout=30, cwd=None, env=None, **kwargs):
        super(ProcessRunner, self).__init__(timeout=timeout, cwd=cwd, **kwargs)
        self.env = env

    def execute(self, argv, input_text=None):
        env = dict(os.environ if self.env is None else self.env)
        env.update(C_LOCALE)
        try:
            proc = subprocess.run(argv, cwd=self.cwd, env=env, input=input_text, capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise self.too_slow(argv, _text(exc.stdout), _text(exc.stderr))
        except OSError as exc:
            raise self.not_found(argv, exc.strerror or exc)
        return proc.returncode, proc.stdout, proc.stderr


class ModuleRunner(Runner):
    """The runner of a module: ``module.run_command`` with the C locale, under timeout(1)."""

    def __init__(self, module, timeout=30, cwd=None, **kwargs):
        super(ModuleRunner, self).__init__(timeout=timeout, cwd=cwd, **kwargs)
        self.module = module

    def execute(self, argv, input_text=None):
        wrapped = ["timeout", "--kill-after=5", "%ds" % max(1, int(self.timeout))] + argv
        rc, out, err = self.module.run_command(wrapped, cwd=self.cwd, data=input_text, binary_data=True,
                                               environ_update=dict(C_LOCALE), check_rc=False,
                                               expand_user_and_vars=False)
        if rc == TIMEOUT_RC:
            raise self.too_slow(argv, out, err)
        if rc == NOT_FOUND_RC or (rc == 126 and "timeout:" in (err or "")):
            raise self.not_found(argv, message("", err))
        return rc, out, err


def _text(value):
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
