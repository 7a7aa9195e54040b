# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Putting files computed on the controller into a directory of the target host.

Used by the action plugins of optimise and container_recipe, which compute on the controller (as
ansible.builtin.template renders there). A file goes through the sodalite.modak.output_file module, run on the
host as the task's user (become included): the collection's one placement (plugins/module_utils/files.py,
``place``), which compares the file in place with the new one and, only when they differ, sets the mode on the
old file's descriptor or renames a fresh temporary file of the directory over it (a link at the path is
replaced, never followed; a directory, or a link to one, is refused). Check mode compares only; --diff reads the
old file without following a link and without blocking on a FIFO.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

MODULE = "sodalite.modak.output_file"


class RemoteDir(object):
    """The output directory on the target host of one task run by ``action`` (an ActionBase)."""

    def __init__(self, action, task_vars, directory):
        self.action, self.task_vars, self.directory = action, task_vars, directory

    def write(self, name, text, mode, secret_values=()):
        """Put file ``name`` in place (the task's check mode and --diff apply); (changed, its path on the host,
        the diff entry or None). ``secret_values`` (a no_log option of the module) are masked wherever the host
        logs the module's call (its journal), the text's included."""
        args = {"output_dir": self.directory, "name": name, "content": text, "mode": "0%o" % mode}
        if secret_values:
            args["secret_values"] = list(secret_values)
        result = self.action._execute_module(module_name=MODULE, task_vars=self.task_vars, module_args=args)
        if result.get("failed") or "path" not in result:
            raise AnsibleActionFail("cannot write %s into %s on the host: %s" % (
                name, self.directory, result.get("msg") or result.get("module_stderr") or "no result"))
        return bool(result.get("changed")), result["path"], result.get("diff")
