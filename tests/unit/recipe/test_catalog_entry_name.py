"""Two applications' recipes of the same recipe name are two catalog entries: the entry is named as the image is,
with the first 12 digits of the recipe hash (a catalog keeps one entry per name; the build role's merge replaces
the entry of the same name)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.model import RecipeSpec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec


def test_two_applications_recipes_get_two_catalog_entries():
    one = spec.from_spec(RecipeSpec(app="lammps", cpu_type="x86", cpu_isa="x86-64-v2"))
    two = spec.from_spec(RecipeSpec(app="gromacs", cpu_type="x86", cpu_isa="x86-64-v2"))
    assert one.name == two.name and one.sha256 != two.sha256          # the review's case: modak-base-1-x86-64-v2
    names = [recipe.catalog_entry(None)["name"] for recipe in (one, two)]
    assert names[0] != names[1]
    assert names == ["%s-%s" % (r.name, r.sha256[:12]) for r in (one, two)]
