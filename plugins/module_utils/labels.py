# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names of the image labels modak writes and reads: one place for the recipe writers, the builders
and the registry reader.

An image built from a modak recipe carries ``modak.<catalog attribute>`` labels (framework, version, isa,
cpu_features...), which a registry scan turns back into a catalog entry, and ``modak.recipe.sha256``, the
hash of the recipe it was built from, which lets a build be skipped when the image is current.
"""

from __future__ import annotations

PREFIX = "modak."
RECIPE_HASH = PREFIX + "recipe.sha256"


def attribute(name):
    """The label of a catalog attribute: 'framework' -> 'modak.framework'."""
    return PREFIX + name
