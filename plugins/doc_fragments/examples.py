# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a module's EXAMPLES run as written (tests/integration/test_module_examples.py runs them there)."""

from __future__ import annotations


class ModuleDocFragment(object):
    """The project directory the EXAMPLES take as given, and where an example says what more it needs."""

    DOCUMENTATION = r"""
options: {}
notes:
  - The EXAMPLES run as written from a project directory made as the collection's README.md says under "Install
    it in your project" (the collection installed, its C(examples/) folder copied in). An example that needs more
    (a cluster's scheduler, a site's files, a DSL beside the playbook, an earlier task's result) says so in the
    comment above it.
"""
