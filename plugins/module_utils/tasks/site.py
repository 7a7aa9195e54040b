# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site profile of a task that reads a DSL (optimise, container_recipe): O(site), a profile file read where the
DSL file is read (on the controller by the action plugins), or O(site_profile), the profile as data (an inventory
variable such as ``modak_site`` in group_vars)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import site_profile

ARGUMENT_SPEC = dict(site=dict(type="path"), site_profile=dict(type="dict"))
MUTUALLY_EXCLUSIVE = [("site", "site_profile")]


def site_of(params, load_file=None):
    """The task's Site, or None: O(site) read with ``load_file`` (path -> Site; by default read where this code
    runs), else O(site_profile) checked as a profile named ``site_profile``."""
    if params.get("site"):
        return (load_file or site_profile.load_file)(params["site"])
    if params.get("site_profile") is not None:
        return site_profile.from_data(params["site_profile"], site_profile.INLINE)
    return None


def as_data(site):
    """The arguments that hand ``site`` (read on the controller) to the module on the host."""
    return {"site_profile": site.doc} if site is not None else {}
