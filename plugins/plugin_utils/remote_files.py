# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Putting files computed on the controller into a directory of the target host.

Used by the action plugins of optimise and container_recipe, which compute on the controller (as
ansible.builtin.template renders there) and hand each file to ansible.legacy.copy's module, like template's
action does through copy's: one module run per file creates the directory when missing, compares checksums,
writes atomically (a rename over the old file; a link at the path is replaced, never followed) and sets the
mode. Check mode asks ansible.legacy.stat for the checksum; --diff reads the old file with ansible.legacy.slurp.
Nothing else runs on the host.
"""

from __future__ import annotations

import base64
import posixpath

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.utils.hashing import checksum_s


class RemoteDir(object):
    """The output directory on the target host of one task run by ``action`` (an ActionBase)."""

    def __init__(self, action, task_vars, directory):
        self.action, self.task_vars = action, task_vars
        self.path = self._absolute(directory)

    def _absolute(self, directory):
        """``directory`` with '~' expanded on the host and a relative one made absolute in the host's working
        directory (where a module run by this task would resolve it)."""
        action = self.action
        if directory.startswith("~"):
            directory = action._remote_expand_user(directory)
        if not posixpath.isabs(directory):
            done = action._low_level_execute_command("pwd", sudoable=False)
            cwd = to_text(done.get("stdout", "")).strip()
            if done.get("rc") != 0 or not posixpath.isabs(cwd):
                raise AnsibleActionFail("cannot resolve the relative output_dir %s on the host" % directory)
            directory = posixpath.join(cwd, directory)
        return posixpath.normpath(directory)

    def join(self, name):
        return posixpath.join(self.path, name)

    def _module(self, name, args):
        result = self.action._execute_module(module_name=name, module_args=args, task_vars=self.task_vars)
        return result

    def read(self, name):
        """The current text of file ``name`` (None when there is none): for --diff."""
        result = self._module("ansible.legacy.slurp", {"src": self.join(name)})
        if result.get("failed"):
            return None
        try:
            return base64.b64decode(result["content"]).decode("utf-8")
        except (KeyError, ValueError):
            return ""

    def differs(self, name, text):
        """Whether file ``name`` is missing or holds other text than ``text`` (check mode)."""
        result = self._module("ansible.legacy.stat", {"path": self.join(name), "follow": False,
                                                      "get_checksum": True, "checksum_algorithm": "sha1"})
        if result.get("failed"):
            raise AnsibleActionFail("cannot stat %s on the host: %s" % (self.join(name), result.get("msg")))
        info = result.get("stat") or {}
        return not info.get("exists") or info.get("islnk") or info.get("checksum") != checksum_s(text)

    def put(self, name, text, mode):
        """Write ``text`` to file ``name`` (mode ``mode``, an int) through ansible.legacy.copy; True when changed."""
        action = self.action
        shell = action._connection._shell
        if shell.tmpdir is None:
            action._make_tmp_path()
        source = shell.join_path(shell.tmpdir, "source")
        action._transfer_data(source, to_bytes(text))
        action._fixup_perms2((shell.tmpdir, source), execute=False)     # read by the module, never run
        result = self._module("ansible.legacy.copy", {
            "src": source, "dest": self.path + "/", "_original_basename": name, "mode": "0%o" % mode,
            "follow": False, "force": True, "checksum": checksum_s(text)})
        if result.get("failed"):
            raise AnsibleActionFail("cannot write %s on the host: %s" % (self.join(name), result.get("msg")))
        return bool(result.get("changed"))

    def write(self, name, text, mode, check_mode, diff):
        """Put file ``name`` in place unless in check mode; (changed, diff entry or None)."""
        before = self.read(name) if diff else None
        if check_mode:
            changed = before != text if diff else self.differs(name, text)
        else:
            changed = self.put(name, text, mode)
        entry = None
        if diff:
            path = self.join(name)
            entry = {"before": before or "", "after": text, "before_header": path, "after_header": path}
        return changed, entry
