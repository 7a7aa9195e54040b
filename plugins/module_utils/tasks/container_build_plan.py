# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container_build_plan task's arguments and plan, shared by the module and its action plugin (which makes
the plan on the controller, plugins/action/container_build_plan.py)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import build_commands
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

ARGUMENT_SPEC = dict(
    engine=dict(type="str", required=True, choices=list(build_commands.ENGINES)),
    recipe=dict(type="str", required=True),
    image=dict(type="str", required=True),
    context=dict(type="str", default="."),
    fakeroot=dict(type="bool", default=False),
    recipe_sha256=dict(type="str"),
    push_to=dict(type="str"),
    tls_verify=dict(type="bool", default=True),
    job_name=dict(type="str", default="modak-build"),
    cpus=dict(type="int", default=8),
    walltime=dict(type="str", default="04:00:00"),
    scheduler=dict(type="str", default="slurm", choices=list(registry.NAMES)),
    modules=dict(type="list", elements="str", default=[]),
    setup=dict(type="list", elements="str", default=[]),
)


def plan(p):
    """The build plan of validated arguments ``p`` (ModakError for a value the plan refuses)."""
    return build_commands.plan(p["engine"], p["recipe"], p["image"], context=p["context"], fakeroot=p["fakeroot"],
                               recipe_sha256=p["recipe_sha256"], push_to=p["push_to"], tls_verify=p["tls_verify"],
                               job_name=p["job_name"], cpus=p["cpus"], walltime=p["walltime"], scheduler=p["scheduler"],
                               modules=p["modules"], setup=p["setup"])
