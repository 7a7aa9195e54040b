# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Staged images (target.image_fetch: staged, the default): the deployment fetches a registry image once, where the
compute nodes read it, before it submits; the job only checks that the image is there.

Each runtime gives ``stage_lines`` (fetch the image into place, run on the login node or in a build job) and
``check_lines`` (the job's lines: ``$IMAGE`` names the image, and the job stops with MISSING when it is not there).
"""

from __future__ import annotations

# short enough to stay whole in a progress line and in a failed job's message
MISSING = "modak: no image at $IMAGE: stage it before submitting (optimised_job does), or set target.image_fetch: job"


def missing_lines(present, absent=None):
    """Lines that run ``absent`` (default: stop the job with MISSING) unless the shell condition ``present`` holds."""
    absent = absent if absent is not None else ['echo "%s" >&2' % MISSING, "exit 1"]
    return ["if ! %s; then" % present] + ["  " + line for line in absent] + ["fi"]
