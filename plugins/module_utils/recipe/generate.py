# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the container_recipe module does: DSL -> Recipe -> files in the output directory."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, files
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import docker, model, singularity

WRITERS = {"singularity": singularity, "docker": docker}
FORMATS = ("singularity", "docker")


def render(document, formats=FORMATS, base_image=None):
    """Parse the DSL and return (recipe, {format: (filename, text)})."""
    request = dsl.parse(document)
    recipe = model.from_request(request, base_image=base_image)
    texts = {}
    for fmt in formats:
        writer = WRITERS[fmt]
        texts[fmt] = (writer.FILENAME, writer.write(recipe))
    return recipe, texts


def write(document, output_dir, formats=FORMATS, base_image=None, check_mode=False):
    """Write the recipes; returns a dict with changed, recipes, base_image, labels, diff."""
    recipe, texts = render(document, formats, base_image)
    if not check_mode:
        files.ensure_dir(output_dir)
    changed, paths, diff = False, {}, []
    for fmt in formats:
        filename, text = texts[fmt]
        path = files.target_path(output_dir, filename)
        before = files.read_existing(path)
        paths[fmt] = path
        if before != text:
            changed = True
            diff.append({"before_header": path, "after_header": path, "before": before or "", "after": text})
            if not check_mode:
                files.write_atomic(path, text, mode=0o644)
    return {"changed": changed, "recipes": paths, "base_image": recipe.base_image, "labels": recipe.labels,
            "recipe_name": recipe.name, "recipe_sha256": recipe.sha256, "catalog_attributes": recipe.attributes,
            "catalog_entry": recipe.catalog_entry(None),
            "diff": diff}
