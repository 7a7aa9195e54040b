# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.batch_job: waits for a job on the controller and prints its progress.

With state=submitted and wait=true, the module submits (wait=false: submission, idempotence, the ledger and
fail_on_job_error stay in the module), then the module is run with state=query every poll_interval seconds
and one line per poll is printed at the default verbosity. Every other use runs the module as it is.
"""

from __future__ import annotations

import time

from ansible.module_utils.common.validation import check_type_bool, check_type_float, check_type_int
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.sodalite.modak.plugins.module_utils.job_control import (
    POLL_FLOOR_S, STATUS_RETRY_S, poll_of, segments_of)
from ansible_collections.sodalite.modak.plugins.plugin_utils import progress

MODULE = "sodalite.modak.batch_job"

display = Display()


def _arg(args, name, check, default):
    value = args.get(name)
    return default if value is None else check(value)


def _poll(result, waited):
    return poll_of(result, waited)


class ActionModule(ActionBase):
    """Run batch_job; with state=submitted and wait=true, wait here and show each poll."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        try:
            if wrap_async or self._task.check_mode or not self._waits(args):
                return merge_hash(result, self._execute_module(module_name=MODULE, module_args=args,
                                                               task_vars=task_vars, wrap_async=wrap_async))
            return merge_hash(result, self._submit_and_follow(args, task_vars))
        finally:
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)

    @staticmethod
    def _waits(args):
        try:
            return (args.get("state") or "submitted") == "submitted" and _arg(args, "wait", check_type_bool, False)
        except (TypeError, ValueError):
            return False     # the module reports the bad value

    def _submit_and_follow(self, args, task_vars):
        started = time.monotonic()
        submitted = self._execute_module(module_name=MODULE, module_args=dict(args, wait=False), task_vars=task_vars)
        if submitted.get("failed"):
            return submitted
        if not submitted.get("active"):          # ended already (rerun: false), nothing to wait for
            return dict(submitted, polls=[_poll(submitted, 0)])
        # the module has validated the arguments: these conversions succeed
        interval = _arg(args, "poll_interval", check_type_float, 5.0)
        timeout = _arg(args, "wait_timeout", check_type_int, 3600)
        warnings = list(submitted.get("warnings") or [])
        if interval < POLL_FLOOR_S:
            warnings.append("poll_interval=%s is below the floor of %s s; polling every %s s"
                            % (interval, POLL_FLOOR_S, POLL_FLOOR_S))
        host = (task_vars or {}).get("inventory_hostname", "")
        subject = "job %s (%s)" % (submitted.get("job_id"), submitted.get("job_name"))
        polls = []
        # the job as the submission resolved it (scheduler, submit directory); the script only names the job's
        # output files, and a poll goes on when it is gone while the job runs
        query_args = dict(state="query", job_id=submitted.get("job_id"), scheduler=submitted.get("scheduler"),
                          chdir=submitted.get("chdir"), wait=False)
        for name in ("script", "extra_args", "after", "fail_on_job_error", "command_timeout"):
            if args.get(name) is not None:
                query_args[name] = args[name]

        def query():
            return self._execute_module(module_name=MODULE, module_args=query_args, task_vars=task_vars)

        def report(last, waited):
            polls.append(_poll(last, waited))
            tail = last.get("stdout_tail") or []
            text = progress.line(host, subject, last.get("state") or "UNKNOWN", ran=last.get("elapsed"), waited=waited,
                                 last=tail[-1] if tail else None, reason=last.get("reason"),
                                 expected_start=last.get("expected_start"), restarts=last.get("restarts"))
            progress.show(display, text)

        report(submitted, time.monotonic() - started)
        last, timed_out = progress.follow(query, lambda r: not r.get("active"), report,
                                          max(POLL_FLOOR_S, interval), timeout, started, first=submitted,
                                          start=POLL_FLOOR_S, transient=lambda r: r.get("status_unread"),
                                          retry_for=STATUS_RETRY_S)
        outcome = dict(last)
        outcome.pop("stdout_tail", None)
        outcome.update(changed=submitted.get("changed", False), cmd=submitted.get("cmd", []), polls=polls,
                       segments=segments_of(polls, last.get("restarts_from")))
        if "invocation" in submitted:     # the task's arguments: the submission ran with wait=false
            invocation = dict(submitted["invocation"])
            invocation["module_args"] = dict(invocation.get("module_args") or {}, wait=True)
            outcome["invocation"] = invocation
        if not last.get("failed"):
            outcome["msg"] = submitted.get("msg")
        elif last.get("status_unread"):
            outcome["msg"] = ("the state of job %s could not be read for %d s (%s); the job may still be running: "
                              "follow it again with state=query job_id=%s"
                              % (submitted.get("job_id"), STATUS_RETRY_S, last.get("msg"), submitted.get("job_id")))
        if timed_out:
            outcome.update(failed=True, msg="job %s is still %s after wait_timeout=%s s"
                           % (last.get("job_id"), last.get("state"), timeout))
        if warnings:
            outcome["warnings"] = warnings
        return outcome
