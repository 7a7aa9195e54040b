# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.async_wait: polls an asynchronous task and prints the last line of its log.

Each poll runs ansible.builtin.async_status's module (as its own action plugin does) and then the async_wait
module, which reads the end of the log on the host; one progress line per poll is printed.
"""

from __future__ import annotations

import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.sodalite.modak.plugins.modules.async_wait import ARGUMENT_SPEC
from ansible_collections.sodalite.modak.plugins.plugin_utils import progress

MODULE = "sodalite.modak.async_wait"
POLL_FLOOR_S = 1.0

display = Display()


def _state(result):
    if result.get("failed"):
        return "FAILED"
    return "FINISHED" if result.get("finished") else "RUNNING"


class ActionModule(ActionBase):
    """Wait for an async task, showing its log's last line at each poll."""

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
        try:
            return merge_hash(result, self._wait(args, task_vars))
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)

    def _wait(self, args, task_vars):
        started = time.monotonic()
        jid = args["jid"]
        label = args["label"] or "async job %s" % jid
        host = (task_vars or {}).get("inventory_hostname", "")
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        polls = []
        tail = {"lines": []}

        def query():
            status = self._execute_module(module_name="ansible.legacy.async_status", task_vars=task_vars,
                                          module_args={"jid": jid, "mode": "status", "_async_dir": async_dir})
            for key in ("started", "finished"):
                status[key] = bool(status.get(key))
            if args["log"]:
                read = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
                if read.get("failed"):
                    raise AnsibleActionFail("cannot read the log %s: %s" % (args["log"], read.get("msg")))
                tail["lines"] = read.get("log_tail") or []
            return status

        def report(status, waited):
            polls.append({"state": _state(status), "waited": int(waited)})
            progress.show(display, progress.line(host, label, _state(status), waited=waited,
                                                 last=tail["lines"][-1] if tail["lines"] else None))

        first = query()
        report(first, time.monotonic() - started)
        last, timed_out = progress.follow(query, lambda status: status.get("finished"), report,
                                          max(POLL_FLOOR_S, args["poll_interval"]), args["timeout"], started,
                                          first=first)
        outcome = dict(last or {}, ansible_job_id=jid, polls=polls, log_tail=tail["lines"])
        if timed_out:
            outcome.update(failed=True, msg="%s has not finished after timeout=%s s" % (label, args["timeout"]))
        return outcome
