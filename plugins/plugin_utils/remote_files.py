# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Putting files computed on the controller into a directory of the target host.

Used by the action plugins of optimise and container_recipe, which compute on the controller (as
ansible.builtin.template renders there). A file costs one transfer into the task's temporary directory and one
POSIX shell command on the host (``PLACE``), run as the task's user (become included), that compares it with the
file in place (``cmp``, and the mode as ``ls -l`` shows it) and, only when they differ, writes it atomically: a
``mktemp`` file in the output directory, its mode set, renamed over the old one (a link at the path is replaced,
never followed; a directory there is refused). The same command in check mode only compares. No Python runs on
the host for this, so a task costs less there than ``ansible.builtin.ping``. On a host without ``cmp`` or
``mktemp`` the file goes through ansible.legacy.copy's module instead (checksums, atomic rename, mode). --diff
reads the old file with ansible.legacy.slurp.
"""

from __future__ import annotations

import base64
import posixpath
import stat

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.utils.hashing import checksum_s

# $1 the transferred file, $2 the output directory, $3 the file name, $4 the mode (octal), $5 the mode as the
# first ten characters of `ls -l` show it, $6 "check" (compare only) or "write". Prints what it found or did:
# same, mode (the content is the same, the mode is not) or changed. Exit 90: a tool is missing on the host.
PLACE = "; ".join((          # one line: the login shell that runs it may be csh, which quotes no newline
    'for tool in cmp mktemp; do command -v "$tool" >/dev/null 2>&1 || exit 90; done',
    'dest="$2/$3"',
    'if [ -d "$dest" ] && [ ! -L "$dest" ]; then echo "$dest is a directory" >&2; exit 2; fi',
    'if [ -f "$dest" ] && [ ! -L "$dest" ] && cmp -s "$1" "$dest"; then'
    ' if [ "$(ls -ld "$dest" | cut -c1-10)" = "$5" ]; then echo same; exit 0; fi;'
    ' if [ "$6" != check ]; then chmod "$4" "$dest" || exit 2; fi; echo mode; exit 0; fi',
    'if [ "$6" = check ]; then echo changed; exit 0; fi',
    'mkdir -p "$2" || exit 2',
    'tmp=$(mktemp "$2/.$3.XXXXXX") || exit 2',
    'if cat "$1" >"$tmp" && chmod "$4" "$tmp" && mv -f "$tmp" "$dest"; then echo changed; exit 0; fi',
    'rm -f "$tmp"; exit 2'))
TOOL_MISSING = 90


def mode_form(mode):
    """``mode`` (an int, a regular file's permission bits) as the first ten characters of ``ls -l``."""
    return stat.filemode(stat.S_IFREG | mode)


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
        return self.action._execute_module(module_name=name, module_args=args, task_vars=self.task_vars)

    def read(self, name):
        """The current text of file ``name`` (None when there is none): for --diff."""
        result = self._module("ansible.legacy.slurp", {"src": self.join(name)})
        if result.get("failed"):
            return None
        try:
            return base64.b64decode(result["content"]).decode("utf-8")
        except (KeyError, ValueError):
            return ""

    def _transfer(self, text):
        """The path on the host of ``text`` put into the task's temporary directory (readable by the become user)."""
        action = self.action
        shell = action._connection._shell
        if shell.tmpdir is None:
            action._make_tmp_path()
        source = shell.join_path(shell.tmpdir, "source")
        action._transfer_data(source, to_bytes(text))
        action._fixup_perms2((shell.tmpdir, source), execute=False)     # read on the host, never run
        return source

    def place(self, name, text, mode, check_mode):
        """Compare file ``name`` with ``text`` and mode ``mode`` and, unless in check mode, write it when they
        differ; True when it differs (changed)."""
        action = self.action
        source = self._transfer(text)
        argv = ["sh", "-c", PLACE, "modak-place", source, self.path, name, "0%o" % mode, mode_form(mode),
                "check" if check_mode else "write"]
        quote = action._connection._shell.quote
        done = action._low_level_execute_command(" ".join(quote(arg) for arg in argv), sudoable=True)
        said = (to_text(done.get("stdout", "")).strip().splitlines() or [""])[-1]
        if done.get("rc") == TOOL_MISSING:
            if check_mode:
                return self._differs_by_stat(name, text)
            return self._put_by_copy(source, name, text, mode)
        if done.get("rc") != 0 or said not in ("same", "mode", "changed"):
            raise AnsibleActionFail("cannot write %s on the host: %s" % (
                self.join(name), to_text(done.get("stderr", "")).strip() or said or "rc %s" % done.get("rc")))
        return said != "same"

    def _differs_by_stat(self, name, text):
        result = self._module("ansible.legacy.stat", {"path": self.join(name), "follow": False,
                                                      "get_checksum": True, "checksum_algorithm": "sha1"})
        if result.get("failed"):
            raise AnsibleActionFail("cannot stat %s on the host: %s" % (self.join(name), result.get("msg")))
        info = result.get("stat") or {}
        return not info.get("exists") or info.get("islnk") or info.get("checksum") != checksum_s(text)

    def _put_by_copy(self, source, name, text, mode):
        result = self._module("ansible.legacy.copy", {
            "src": source, "dest": self.path + "/", "_original_basename": name, "mode": "0%o" % mode,
            "follow": False, "force": True, "checksum": checksum_s(text)})
        if result.get("failed"):
            raise AnsibleActionFail("cannot write %s on the host: %s" % (self.join(name), result.get("msg")))
        return bool(result.get("changed"))

    def write(self, name, text, mode, check_mode, diff):
        """Put file ``name`` in place unless in check mode; (changed, diff entry or None)."""
        before = self.read(name) if diff else None
        changed = self.place(name, text, mode, check_mode)
        entry = None
        if diff:
            path = self.join(name)
            entry = {"before": before or "", "after": text, "before_header": path, "after_header": path}
        return changed, entry
