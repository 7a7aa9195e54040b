# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the container_recipe module does: RecipeSpec -> Recipe -> files in the output directory."""

from __future__ import annotations

import os

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import docker, spec, singularity

RECIPE_MODE = 0o644

WRITERS = {"singularity": singularity, "docker": docker}
FORMATS = ("singularity", "docker")


def render(recipe_spec, formats=FORMATS, base_image=None, wheels=False):
    """(recipe, {format: (filename, text)}) of a RecipeSpec (recipe.spec.spec_of gives a DSL's)."""
    recipe = spec.from_spec(recipe_spec, base_image=base_image, wheels=wheels)
    texts = {}
    for fmt in formats:
        writer = WRITERS[fmt]
        texts[fmt] = (writer.FILENAME, writer.write(recipe))
    return recipe, texts


def place_wheels(source_dir, output_dir, check_mode=False):
    """Hard-link (else copy) the ``*.whl`` files of ``source_dir`` into ``output_dir``/wheels; the names placed. Each
    must be a regular file (``files.place_copy``): a link among them is refused, never followed."""
    try:
        names = sorted(n for n in os.listdir(source_dir) if n.endswith(".whl"))
    except OSError as exc:
        raise OutputError("cannot read the wheel directory %s: %s" % (source_dir, exc.strerror))
    if not names:
        raise OutputError("the wheel directory %s holds no .whl file" % source_dir)
    target = os.path.join(output_dir, "wheels")
    placed = []
    for name in names:
        try:
            if files.place_copy(target, name, os.path.join(source_dir, name), check_mode) != files.SAME:
                placed.append(name)
        except (IOError, OSError) as exc:
            raise OutputError("cannot place the wheel %s in %s: %s" % (name, target, exc))
    if not check_mode:
        stable_time(target, names)
    return placed


def stable_time(target, names):
    """The wheel directory of the build context gets the time of its newest wheel: a build cache keyed by what
    COPY reads (ch-image's: each path's mode, size and time, the directory's too) then finds the same wheels placed
    anew into another context, so an unchanged framework layer is not built again."""
    try:
        newest = max(os.lstat(os.path.join(target, name)).st_mtime_ns for name in names)
        os.utime(target, ns=(newest, newest), follow_symlinks=False)
    except (OSError, NotImplementedError, ValueError):
        pass          # a time left as it is costs a rebuild, nothing else


def write(recipe_spec, output_dir, formats=FORMATS, base_image=None, check_mode=False, wheels=None):
    """Write the recipes; returns a dict with changed, recipes, base_image, labels, diff.

    ``wheels``: a directory of wheels (the framework's pinned wheel) placed in the build context.
    """
    recipe, texts = render(recipe_spec, formats, base_image, bool(wheels))
    changed, paths, diff = False, {}, []
    if wheels:
        placed = place_wheels(wheels, output_dir, check_mode)
        if placed:
            changed = True
            diff.append({"before_header": "wheels/", "after_header": "wheels/", "before": "",
                         "after": "".join(n + "\n" for n in placed)})
    directory = os.path.abspath(output_dir)
    for fmt in formats:
        filename, text = texts[fmt]
        path = paths[fmt] = os.path.join(directory, filename)
        before = files.read_for_diff(directory, filename)
        if files.place(directory, filename, text, RECIPE_MODE, check_mode) != files.SAME:
            changed = True
            diff.append({"before_header": path, "after_header": path, "before": before, "after": text})
    return dict(outcome(recipe, paths, changed), diff=diff)


def outcome(recipe, paths, changed):
    """What container_recipe returns for ``recipe`` written to ``paths`` ({format: path})."""
    return {"changed": changed, "recipes": paths, "base_image": recipe.base_image, "labels": recipe.labels,
            "recipe_name": recipe.name, "recipe_sha256": recipe.sha256, "catalog_attributes": recipe.attributes,
            "catalog_entry": recipe.catalog_entry(None)}
