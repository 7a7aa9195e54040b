# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup sodalite.modak.project_path: a controller path by the collection's one rule (plugin_utils/controller_paths.py),
for the playbooks and roles."""

from __future__ import annotations

DOCUMENTATION = r"""
name: project_path
author:
  - modak developers (@sodalite-modak)
short_description: A controller path, resolved as the collection's tasks resolve it
description:
  - Returns each term as an absolute path of the controller, by the rule every playbook, role and action plugin of
    the collection follows (docs/ee.md, "Relative paths").
  - A path to write (the default) has C(~) expanded and, when relative, is under the project directory, the
    working directory of C(ansible-playbook), which AWX and ansible-runner start in the project's root.
  - With O(existing=true) the term names a file or directory to read. A relative one is looked up as
    M(ansible.builtin.template) looks up its O(ansible.builtin.template#module:src) (the role's C(files/) and
    folder, the task file's folder, the playbook's folder), then in the folder of each playbook file given to
    C(ansible-playbook), then in the project directory; the lookup fails, naming every place, when none holds it.
options:
  _terms:
    description: The paths.
    required: true
    type: list
    elements: str
  existing:
    description: The terms name files or directories to read, looked up as described above.
    type: bool
    default: false
notes:
  - C($PWD) is not the project directory under ansible-runner, which passes its caller's environment on and starts
    C(ansible-playbook) in the project.
"""

EXAMPLES = r"""
- name: Write the job script under the project
  sodalite.modak.optimise:
    dsl_file: dsl/train.yaml
    output_dir: "{{ lookup('sodalite.modak.project_path', 'out') }}"

- name: Read a DSL next to the playbook or in the project
  ansible.builtin.set_fact:
    train_doc: "{{ lookup('ansible.builtin.file', lookup('sodalite.modak.project_path', 'dsl/train.yaml', existing=true)) | from_yaml }}"
"""

RETURN = r"""
_raw:
  description: The absolute paths, one per term.
  type: list
  elements: str
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.sodalite.modak.plugins.plugin_utils import controller_paths


class LookupModule(LookupBase):
    """Absolute controller paths."""

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if not self.get_option("existing"):
            return [controller_paths.to_write(str(term)) for term in terms]
        search = (variables or {}).get("ansible_search_path") or [self._loader.get_basedir()]
        return [controller_paths.to_read(self._loader, search, str(term)) for term in terms]
