# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of sodalite.modak.container_build_plan: the plan is pure computation, made on the controller.

Nothing runs on the host and nothing is transferred; the role runs the returned commands where the build runs.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import container_build_plan as task


class ActionModule(ActionBase):
    """Plan the build on the controller."""

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, params = self.validate_argument_spec(argument_spec=task.ARGUMENT_SPEC)
        try:
            planned = task.plan(params)
        except ModakError as exc:
            return merge_hash(result, dict(failed=True, msg=str(exc)))
        return merge_hash(result, dict(planned, changed=False))
