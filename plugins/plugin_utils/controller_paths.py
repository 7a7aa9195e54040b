# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for the controller paths a task, playbook or role of the collection is given.

A path to read (a DSL, a catalog, a site profile, an application directory) is looked up as
ansible.builtin.template looks up its src: the role's files/ and folder, the task file's folder, the play's
playbook folder (Ansible's loader: ``path_dwim_relative_stack``); then the folder of each playbook file given to
ansible-playbook (a playbook that imports one of the collection's keeps its own folder); then the project
directory. A path to write (an output directory, a results store, the fetched job output) is under the project
directory. The project directory is ansible-playbook's working directory: the directory it is started in, and the
project's root under AWX and ansible-runner, which start it there (never $PWD, which ansible-runner passes on from
its own caller). '~' is the controller user's home in both.

Used by the action plugins that read controller files and by the project_path lookup, through which the
playbooks and roles resolve theirs.
"""

from __future__ import annotations

import os

from ansible import context
from ansible.errors import AnsibleFileNotFound


def project_dir():
    """The project directory: ansible-playbook's working directory."""
    return os.getcwd()


def playbook_dirs():
    """The folders of the playbook files given to ansible-playbook, first given first (none for a playbook named by
    its collection name, nor for the ansible command's host patterns, which name no file)."""
    found = []
    for arg in context.CLIARGS.get("args") or ():
        if isinstance(arg, str) and os.path.isfile(arg):
            folder = os.path.dirname(os.path.abspath(arg))
            if folder not in found:
                found.append(folder)
    return found


def to_write(path):
    """The absolute controller path of a place to write: '~' expanded, a relative path under the project
    directory."""
    return os.path.normpath(os.path.join(project_dir(), os.path.expanduser(path)))


def to_read(loader, search_path, path):
    """The absolute controller path of the existing file or directory ``path`` names, looked up as template looks
    up its src (``search_path``: the task's, Ansible's ``get_search_path()`` or ``ansible_search_path``), then in
    the playbooks' folders, then in the project directory. Raises AnsibleFileNotFound naming every place looked
    at."""
    path = os.path.expanduser(path)
    if not path:
        raise AnsibleFileNotFound("an empty path names no file")
    if os.path.isabs(path):
        return path
    try:
        return os.path.abspath(loader.path_dwim_relative_stack(search_path, "files", path))
    except AnsibleFileNotFound as exc:
        searched = list(exc.paths or [])
    for folder in playbook_dirs() + [project_dir()]:
        candidate = os.path.join(folder, path)
        if os.path.exists(candidate):
            return candidate
        searched.append(candidate)
    places = []
    for place in searched:
        place = os.path.abspath(place)
        if place not in places:
            places.append(place)
    raise AnsibleFileNotFound(file_name=path, paths=places)
