# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site profile options of the modules that read a DSL (site_profile.TASK_OPTIONS in plugins/module_utils)."""

from __future__ import annotations


class ModuleDocFragment(object):
    """O(site) and O(site_profile): the site's defaults and fabric presets under the DSL."""

    DOCUMENTATION = r"""
options:
  site:
    description:
      - Path of a site profile (YAML or JSON, C(schemas/modak-site.schema.json)), read where and as O(dsl_file) is
        read (on the controller for M(sodalite.modak.optimise) and M(sodalite.modak.container_recipe)).
      - It gives the site's defaults of the DSL's C(target), C(job_options), C(application.launcher) and
        C(application.fabric) fields, and its fabric presets (docs/scheduler.md, "Site profiles").
      - The DSL's own values win, field by field (mappings merged, lists and scalars replaced); a problem in a value
        that came from the profile names the profile and its field.
      - Mutually exclusive with O(site_profile).
    type: path
  site_profile:
    description:
      - The site profile as data, for example an inventory variable given once in the group vars of the login
        nodes, given as C(site_profile="{{ modak_site }}"). Problems name it C(site_profile).
      - Mutually exclusive with O(site).
    type: dict
"""
