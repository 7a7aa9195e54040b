"""The embedded catalog names only images that exist: published references, or images modak builds."""

from __future__ import annotations

import os

import pytest
from helpers import ROOT, ai_doc

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher, recipe_images
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.model import Choice
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import container_recipe as container_recipe_task

PYTORCH = {"framework": "pytorch", "version": "2.5"}

ORIGINAL = "SODALITE-EU/application-optimisation"
# Every reference a published catalog entry may use, with where it is published. Add a reference only
# with its source; anything that cannot be shown to be published gets a recipe instead.
PUBLISHED = {
    # Docker Hub tensorflow/tensorflow: <version>[-gpu] tags, and <version>[-gpu]-py3 up to 2.1
    "docker://tensorflow/tensorflow:1.14.0-py3": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:1.15.5-py3": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:1.15.5-gpu-py3": "hub.docker.com/r/tensorflow/tensorflow tags (Renovate "
                                                     "update 1.15.2-gpu-py3 -> 1.15.5-gpu-py3)",
    "docker://tensorflow/tensorflow:2.1.0-py3": ORIGINAL + " MODAK/db/modak_prod.sql mapper row 22",
    "docker://tensorflow/tensorflow:2.1.0-gpu-py3": ORIGINAL + " MODAK/db/modak_prod.sql mapper row 21",
    "docker://tensorflow/tensorflow:2.4.0": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:2.10.0": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:2.10.0-gpu": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:2.13.0": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:2.15.0": "hub.docker.com/r/tensorflow/tensorflow tags",
    "docker://tensorflow/tensorflow:2.15.0-gpu": "hub.docker.com/r/tensorflow/tensorflow tags",
    # Docker Hub pytorch/pytorch publishes only <version>-cuda<x>-cudnn<y>-runtime|devel
    "docker://pytorch/pytorch:1.4-cuda10.1-cudnn7-runtime": "hub.docker.com/r/pytorch/pytorch tags",
    "docker://pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime": "hub.docker.com/r/pytorch/pytorch tags",
    "docker://pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime": "hub.docker.com/r/pytorch/pytorch tags",
    "docker://pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime": "hub.docker.com/r/pytorch/pytorch tags",
    "docker://pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime": "hub.docker.com/r/pytorch/pytorch tags",
    # NVIDIA NGC release containers (catalog.ngc.nvidia.com, monthly YY.MM tags)
    "docker://nvcr.io/nvidia/tensorflow:23.10-tf2-py3": "NGC TensorFlow release 23.10",
    "docker://nvcr.io/nvidia/pytorch:24.01-py3": "NGC PyTorch release 24.01",
    "docker://nvcr.io/nvidia/jax:24.04-py3": "NGC JAX release 24.04",
    # CSCS images the original MODAK's test database maps its MPI requests to
    "docker://ethcscs/openmpi:3.1.3": ORIGINAL + " MODAK/db/modak_test.sql (ethcscs_openmpi_3.1.3)",
    "docker://ethcscs/mpich:ub1804_cuda101_mpi314_gnugprof": ORIGINAL + " MODAK/db/modak_test.sql",
}
# The tags the original MODAK published on Docker Hub (modakopt/modak): its production mapper table
# (MODAK/db/modak_prod.sql before commit a5fbfab) and containers/DL/published/ ("containers published on
# dockerhub https://hub.docker.com/r/modakopt/modak").
MODAKOPT_PUBLISHED = {
    "pytorch-1.5-cpu-pip", "pytorch-1.5-cpu-src", "pytorch-1.5-gpu-pip", "pytorch-1.5-gpu-src",
    "pytorch-latest-cpu-pip", "pytorch-latest-cpu-src", "pytorch-latest-gpu-pip",
    "tensorflow-2.1-cpu-pip", "tensorflow-2.1-cpu-src", "tensorflow-2.1-gpu-pip", "tensorflow-2.1-gpu-src",
    "tensorflow-2.4-cpu-src", "tensorflow-latest-cpu-pip", "tensorflow-latest-gpu-pip", "tensorflow-latest-gpu-src",
    "tensorflow-ngraph-1.14", "test-ubuntu", "ubuntu-18-04",
}
PUBLISHED.update(("docker://modakopt/modak:%s" % tag, ORIGINAL + " modak_prod.sql mapper")
                 for tag in MODAKOPT_PUBLISHED)


def _raw_entries():
    import yaml  # pylint: disable=import-outside-toplevel
    with open(os.path.join(ROOT, "catalog", "images.yaml")) as handle:
        return yaml.safe_load(handle)["images"]


def test_every_published_entry_is_on_the_list_of_published_references():
    unknown = sorted(e["uri"] for e in _raw_entries() if "recipe" not in e and e["uri"] not in PUBLISHED)
    assert not unknown, "not shown to be published; give these entries a recipe: %s" % unknown


def test_no_entry_uses_a_modakopt_tag_the_original_did_not_publish(catalog):
    tags = [i.uri.split(":", 2)[2] for i in catalog if i.uri.startswith("docker://modakopt/modak:")]
    assert tags and set(tags) <= MODAKOPT_PUBLISHED


def test_recipe_entries_push_under_the_build_prefix_tagged_by_their_recipe(catalog):
    built = [i for i in catalog if i.recipe]
    assert len(built) >= 10
    for image in built:
        sha = dict(image.labels)["modak.recipe.sha256"]
        assert image.uri.startswith(recipe_images.DEFAULT_PREFIX + "/") and image.uri.endswith(":" + sha[:12])
        assert image.uri not in PUBLISHED


def test_the_build_prefix_is_a_parameter(tmp_path):
    registry = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"),
                                      build_prefix="docker://registry.example.org:5443/team")
    assert all(i.uri.startswith("docker://registry.example.org:5443/team/") for i in registry if i.recipe)
    folder = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"), build_prefix=str(tmp_path))
    assert all(i.uri.startswith(str(tmp_path) + "/") and i.uri.endswith(".sif") for i in folder if i.recipe)
    with pytest.raises(CatalogError, match="build prefix"):
        ImageCatalog.from_data([{"name": "x", "recipe": {"framework": "pytorch", "version": "2.5"}}],
                               build_prefix="http://evil/$(id)")


def test_a_base_image_changes_cpu_recipes_and_their_tags():
    section = {"framework": "pytorch", "version": "2.5.1"}
    plain = ImageCatalog.from_data([{"name": "x", "recipe": section}]).images[0]
    based = ImageCatalog.from_data([{"name": "x", "recipe": section}],
                                   base_image="localhost:5000/modak/debian:bookworm").images[0]
    assert plain.uri != based.uri and plain.framework == based.framework == "pytorch"


def test_recipe_entries_cannot_claim_attributes_of_their_own():
    with pytest.raises(CatalogError, match="attributes come from the recipe; remove cpu_features, isa"):
        ImageCatalog.from_data([{"name": "x", "recipe": PYTORCH, "isa": "x86-64-v4", "cpu_features": ["amx_tile"]}])
    with pytest.raises(CatalogError, match="recipe.cpu_type"):
        ImageCatalog.from_data([{"name": "x", "recipe": {"framework": "pytorch", "cpu_type": "z80"}}])
    with pytest.raises(CatalogError, match="has no option for the graph compiler xla"):
        ImageCatalog.from_data([{"name": "x", "recipe": dict(PYTORCH, compilers=["xla"])}])


def test_the_build_carries_the_recipe_spec_that_container_recipe_builds(catalog):
    """Each recipe entry of the catalog resolves, without the DSL parser, to the recipe that container_recipe
    writes from the recipe specification its build request carries (never turned back into a DSL document)."""
    for image in catalog:
        if image.recipe:
            build = recipe_images.build_request(Choice(image, image.uri, "catalog"))
            assert "dsl" not in build
            spec = container_recipe_task.spec_from_dict(build["recipe"])
            recipe, _texts = generate.render(spec, base_image=build["base_image"])
            assert recipe.sha256 == build["recipe_sha256"] == dict(image.labels)["modak.recipe.sha256"], image.name


@pytest.mark.parametrize("recipe,path", [
    ({"framework": "pytorch", "version": "two"}, "recipe.version"),
    ({"framework": "pytorch", "cpu_isa": "z80"}, "recipe.cpu_isa"),
    ({"framework": "pytorch", "python_packages": ["x; rm -rf /"]}, "recipe.python_packages[0]"),
    ({"framework": "pytorch", "extra": 1}, "recipe.extra"),
    # what the catalog and the DSL refuse beyond the schema (a fresh-eyes review found them accepted)
    ({"framework": "tensorflow", "compilers": ["inductor"]}, "recipe.compilers[0]"),
    ({"framework": "pytorch", "cpu_type": "x86", "cpu_isa": "armv8.2-a"}, "recipe.cpu_isa")])
def test_a_bad_recipe_spec_is_named_by_its_path(recipe, path):
    with pytest.raises(DslInvalid) as caught:
        container_recipe_task.spec_from_dict(recipe)
    assert [p.path for p in caught.value.problems] == [path]


def test_availability_of_published_built_and_to_build_images(tmp_path):
    catalog = ImageCatalog.from_data([{"name": "x", "recipe": PYTORCH}], build_prefix=str(tmp_path))
    request = dsl.parse(ai_doc("pytorch", "2.5"))
    choice = matcher.choose(request, catalog)
    assert choice.image.recipe and recipe_images.availability(choice)[0] == "to-build"
    with open(choice.uri, "w") as handle:
        handle.write("sif")
    assert recipe_images.availability(choice)[0] == "built"
    assert recipe_images.availability(Choice(None, "docker://tensorflow/tensorflow:2.15.0", "official"))[0] == \
        "published"
    assert recipe_images.availability(Choice(None, "docker://mine:1", "user")) == (None, None)


def test_an_unreachable_registry_means_to_build_within_the_deadline():
    # port 9 on loopback (discard): refused at once; the lookup never hangs
    catalog = ImageCatalog.from_data([{"name": "x", "recipe": PYTORCH}], build_prefix="docker://127.0.0.1:9/modak")
    choice = matcher.choose(dsl.parse(ai_doc("pytorch", "2.5")), catalog)
    state, why = recipe_images.availability(choice, timeout=2)
    assert state == "to-build" and "not reachable" in why


def test_the_build_request_is_the_recipe_document_and_the_push_target(catalog):
    request = dsl.parse(ai_doc("pytorch", "2.5"))
    choice = matcher.choose(request, catalog)
    build = recipe_images.build_request(choice)
    assert build["push_to"] == choice.uri and build["image"] == choice.uri[len("docker://"):]
    again = ImageCatalog.from_data([{"name": "again", "recipe": choice.image.recipe.as_dict()}]).images[0]
    assert again.uri == choice.uri


@pytest.mark.parametrize("entry,problem", [
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2.1"}, None),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": 2.1, "isa": "x86-64-v3"}, None),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf"}, "images[0]: 'version' is a required property"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "two"}, "images[0].version: 'two'"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "extra": 1}, "('extra' was unexpected)"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "isa": "z80"}, "images[0].isa: 'z80'"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "cpu_features": ["ok", "Not ok"]},
     "images[0].cpu_features[1]: 'Not ok'"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "mpi": {"library": "mpich"}}, None),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "mpi": {"version": "1"}},
     "images[0].mpi: 'library' is a required property"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": True},
     "images[0].version: True is not of type"),
    ({"name": "x", "recipe": {"framework": "pytorch", "version": "2.5"}}, None),
    ({"name": "x", "recipe": {"framework": "pytorch", "enable_opt_build": "yes"}},
     "images[0].recipe.enable_opt_build: 'yes' is not of type 'boolean'"),
    ({"name": "x", "recipe": {"framework": "pytorch", "compilers": ["inductor", 3]}},
     "images[0].recipe.compilers[1]: 3"),
    ({"name": "x", "labels": {"a": "b"}, "uri": "docker://a/b:1", "framework": "tf", "version": "2"}, None),
    ({"name": "x", "labels": {"a": 1}, "uri": "docker://a/b:1", "framework": "tf", "version": "2"},
     "images[0].labels.a: 1 is not of type 'string'"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "accelerator": True},
     "images[0].accelerator: True is not one of"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "accelerator": 1, "build": None},
     "images[0].build: None is not one of"),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "accelerator": "amd",
      "build": "official"}, None),
    ({"name": "x", "uri": "docker://a/b:1", "framework": "tf", "version": "2", "math": ["mkl", ["mkl"]]},
     "images[0].math[1]: ['mkl'] is not one of"),
    (["not", "an", "entry"], "images[0]: ['not', 'an', 'entry'] is not of type 'object'"),
])
def test_an_entry_the_schema_refuses_is_reported_at_its_path(entry, problem):
    """Valid entries load (true is no number, 1 no text); each refused one names its path and what is wrong."""
    if problem is None:
        assert len(ImageCatalog.from_data({"images": [entry]})) == 1
        return
    with pytest.raises(CatalogError) as caught:
        ImageCatalog.from_data({"images": [entry]}, "mine.yaml")
    assert str(caught.value).startswith("catalog mine.yaml is malformed:\n  - ") and problem in str(caught.value)
