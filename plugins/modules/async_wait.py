#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: async_wait
short_description: Wait for an asynchronous task, showing the last line of its log at each poll
version_added: "0.1.0"
description:
  - Waits until a task started with C(async) and C(poll=0) has finished, like an M(ansible.builtin.async_status)
    task with an C(until) loop, and returns that task's result (its own failure included).
  - After each poll it prints one line at the default verbosity with the host, O(label), the state
    (C(RUNNING), C(FINISHED) or C(FAILED)), the time waited and the last line of O(log) when the host can read
    it, so that a long task (an image build) shows how it goes while it runs.
  - "A progress line looks like this one: localhost: build of localhost/modak/x:1 RUNNING, waited 0:02:10: STEP 4/9: RUN make"
  - The waiting runs on the controller (action plugin); on the host, the module only reads the end of O(log)
    (at most its last 4 KiB, control characters shown as C(?)), and M(ansible.builtin.async_status) reads the
    task's state.
  - The roles of this collection use it to wait for image builds (P(sodalite.modak.container_build#role)).
extends_documentation_fragment:
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
attributes:
  action:
    support: full
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    details: The polling and the progress lines run on the controller.
  async:
    support: none
    description: Supports being used with the C(async) keyword.
  check_mode:
    support: full
    description: Can run in check mode and return changed status prediction without modifying target.
    details: Waiting changes nothing; in check mode a task started with C(async) did not run, so there is usually nothing to wait for.
  diff_mode:
    support: none
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
  platform:
    support: full
    platforms: posix
    description: Target OS/families that can be operated against.
options:
  jid:
    description:
      - The job id of the asynchronous task (the C(ansible_job_id) it registered).
    type: str
    required: true
  log:
    description:
      - A file on the host that the task writes to; its last line is shown at each poll.
    type: path
  log_lines:
    description:
      - How many last lines of O(log) RV(log_tail) holds (1 to 200); a progress line shows the last one.
    type: int
    default: 3
  label:
    description:
      - What is waited for, as the progress lines name it.
      - Default is C(async job <jid>).
    type: str
  timeout:
    description:
      - Seconds to wait; the task fails when the asynchronous task has not finished then.
    type: int
    default: 3600
  poll_interval:
    description:
      - Seconds between two polls; values below 1 are raised to 1.
    type: float
    default: 10
seealso:
  - module: ansible.builtin.async_status
"""

EXAMPLES = r"""
# Needs a source tree with a Makefile in /scratch/alice/src on the host; any long command started with async and
# poll 0 is waited for the same way.
- name: Build, the output going to a log
  ansible.builtin.command:
    argv: [sh, -c, 'exec make >build.log 2>&1']
    chdir: /scratch/alice/src
  async: 3600
  poll: 0
  register: build

- name: Wait for the build, showing the log's last line every 10 seconds
  sodalite.modak.async_wait:
    jid: "{{ build.ansible_job_id }}"
    log: /scratch/alice/src/build.log
    label: build of the solver
    timeout: 3600
    poll_interval: 10
  register: build_result
"""

RETURN = r"""
finished:
  description: Whether the asynchronous task has finished.
  returned: always
  type: bool
  sample: true
polls:
  description:
    - Each poll, oldest first; C(waited) is the number of seconds since the wait began, C(state) is C(RUNNING),
      C(FINISHED) or C(FAILED).
  returned: always
  type: list
  elements: dict
  sample: [{state: RUNNING, waited: 10}, {state: FINISHED, waited: 20}]
log_tail:
  description:
    - The last lines (at most O(log_lines)) of O(log) at the last poll, read as a regular file reached without
      following a link (C(plugins/module_utils/tail.py)); empty without O(log) or when it cannot be read.
  returned: always
  type: list
  elements: str
  sample: ["COMMIT localhost/modak/x:1"]
ansible_job_id:
  description: The asynchronous task's job id.
  returned: always
  type: str
  sample: "j123456789.4242"
msg:
  description: Why the wait failed (the time ran out), or the asynchronous task's own message.
  returned: on failure
  type: str
  sample: "build of localhost/modak/x:1 has not finished after timeout=3600 s"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils.tail import last_lines

ARGUMENT_SPEC = dict(
    jid=dict(type="str", required=True),
    log=dict(type="path"),
    log_lines=dict(type="int", default=3),
    label=dict(type="str"),
    timeout=dict(type="int", default=3600),
    poll_interval=dict(type="float", default=10),
)
MAX_LOG_LINES = 200


def main():
    """On the host: the end of the log (the action plugin polls the task itself)."""
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    count = min(max(1, module.params["log_lines"]), MAX_LOG_LINES)
    module.exit_json(changed=False, log_tail=last_lines(module.params["log"], count, max_bytes=max(4096, 256 * count)))


if __name__ == "__main__":
    main()
