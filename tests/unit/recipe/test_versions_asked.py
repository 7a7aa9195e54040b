"""Recipes build what the DSL asks for: the requested MPI release, the CUDA its framework release needs."""

from __future__ import annotations

import pytest
from cases import _ai

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import docker, spec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError


def _hpc(library, version=None):
    mpi = {"library": library}
    if version is not None:
        mpi["version"] = version
    return {"job": {"application": {"executable": "./solver"},
                    "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                                     "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                      "parallelisation-mpi": mpi}}}}


def recipe(doc):
    return spec.from_spec(spec.spec_of(dsl.parse(doc)))


@pytest.mark.parametrize("library,version,url", [
    ("openmpi", "3.1.3", "https://download.open-mpi.org/release/open-mpi/v3.1/openmpi-3.1.3.tar.bz2"),
    ("mpich", "3.3.1", "https://www.mpich.org/static/downloads/3.3.1/mpich-3.3.1.tar.gz"),
    ("openmpi", "5.0.5", "https://download.open-mpi.org/release/open-mpi/v5.0/openmpi-5.0.5.tar.bz2"),
])
def test_an_mpi_release_the_distribution_lacks_is_built_from_source(library, version, url):
    """Issue 10, defect 11: asked 3.1.3, the recipe was Debian's 4.1.4."""
    made = recipe(_hpc(library, version))
    assert made.attributes["mpi_version"] == version and version in made.name
    text = docker.write(made)
    assert url in text and "./configure --prefix=/usr/local" in text and "make install" in text
    assert "openmpi-bin" not in text and "libmpich-dev" not in text


@pytest.mark.parametrize("library,version,packaged", [("openmpi", "4.1", "4.1.4"), ("openmpi", None, "4.1.4"),
                                                      ("mpich", "4.0", "4.0.2"), ("openmpi", "4.1.4", "4.1.4")])
def test_the_distributions_mpi_when_it_is_the_one_asked_for(library, version, packaged):
    made = recipe(_hpc(library, version))
    assert made.attributes["mpi_version"] == packaged
    assert "configure" not in docker.write(made)


@pytest.mark.parametrize("version,why", [("3.1", "full release number"), (">=3,<4", "pins one MPI version")])
def test_an_mpi_version_that_names_no_release_is_refused(version, why):
    with pytest.raises(RecipeError, match=why):
        recipe(_hpc("openmpi", version))


def test_the_recipe_hint_names_the_requested_mpi_version():
    """The matcher's 'build it from the recipe' hint names the requested release, not the distribution's."""
    choice = matcher.choose(dsl.parse(_hpc("openmpi", "3.1.3")), ImageCatalog.from_data([]))
    assert choice.source == "recipe" and choice.image is None     # the program is the user's own: it runs bare
    assert "the recipe modak-openmpi-3.1.3-" in choice.explanation[-1]


@pytest.mark.parametrize("version,cuda,base", [
    ("2.15", "12.2", "nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04"),
    ("2.15.1", "12.2", "nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04"),
    ("2.13", "11.8", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"),
    ("2.17", "12.3", "nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04"),
])
def test_a_tensorflow_gpu_recipe_defaults_to_the_cuda_of_its_release(version, cuda, base):
    """Issue 10, defect 13: without opt_build.cuda_version the recipe failed."""
    made = recipe(_ai("tensorflow", {"version": version}, {"cpu_type": "x86", "acc_type": "nvidia"}))
    assert made.attributes["cuda"] == cuda and made.base_image == base


def test_the_dsls_cuda_version_wins_and_unknown_lines_say_so():
    made = recipe(_ai("tensorflow", {"version": "2.15"}, {"cpu_type": "x86", "acc_type": "nvidia",
                                                          "cuda_version": "12.4"}))
    assert made.attributes["cuda"] == "12.4"
    with pytest.raises(RecipeError, match="no CUDA version is known for tensorflow 9.9"):
        recipe(_ai("tensorflow", {"version": "9.9"}, {"cpu_type": "x86", "acc_type": "nvidia"}))
    with pytest.raises(RecipeError, match="no published CUDA base image"):
        recipe(_ai("pytorch", {"version": "2.0"}, {"cpu_type": "x86", "acc_type": "nvidia"}))


@pytest.mark.parametrize("version,base", [("2.1", "tensorflow/tensorflow:2.1.0-gpu-py3"),
                                          ("1.15.5", "tensorflow/tensorflow:1.15.5-gpu-py3"),
                                          ("2.3", "tensorflow/tensorflow:2.3.0-gpu")])
def test_an_old_gpu_release_builds_on_the_frameworks_own_image(version, base):
    """Issue 22, found 4: no CUDA base of CUDA 10.x is published; TensorFlow's own GPU image of the release is."""
    made = recipe(_ai("tensorflow", {"version": version}, {"cpu_type": "x86", "acc_type": "nvidia"}))
    assert made.base_image == base and made.attributes["accelerator"] == "nvidia"


def test_a_tuning_that_may_choose_torch_compile_gets_a_compiler_in_the_image():
    """The tuned choice must run in the image: torch.compile (inductor) needs a C++ compiler there."""
    doc = _ai("pytorch", {"version": "2.5"}, {"cpu_type": "x86"})
    assert "inductor" not in recipe(doc).attributes["compilers"]
    doc["job"]["optimisation"]["tuning"] = {"compile": [False, True]}
    made = recipe(doc)
    assert "inductor" in made.attributes["compilers"]
    assert any("g++" in getattr(block, "packages", ()) for block in made.blocks)
