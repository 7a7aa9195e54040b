"""opt_build.python_packages: modak's image installs the launcher's packages beside the framework (pinned), and only
an image that carries them fits the request."""

from __future__ import annotations

import copy

import pytest
import yaml
from helpers import ROOT, spec_of

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate

with open("%s/examples/pytorch-ddp-slurm.yaml" % ROOT) as _handle:
    DDP = yaml.safe_load(_handle)


def with_packages(packages, doc=DDP):
    doc = copy.deepcopy(doc)
    doc["job"]["optimisation"]["opt_build"]["python_packages"] = packages
    return doc


def test_the_recipe_installs_them_with_the_framework():
    _recipe, texts = generate.render(spec_of(with_packages(["accelerate==1.15.0"])), formats=("docker",))
    text = texts["docker"][1]
    assert "pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu torch==2.13.0 " \
           "accelerate==1.15.0" in text


def test_a_source_build_installs_them_after_the_framework():
    doc = with_packages(["lightning==2.6.6"])
    doc["job"]["optimisation"]["opt_build"]["cpu_microarch"] = "sapphirerapids"
    recipe, texts = generate.render(spec_of(doc), formats=("docker",))
    assert recipe.attributes["build"] == "optimised-source"
    assert "pip install --no-cache-dir lightning==2.6.6" in texts["docker"][1]


def test_only_an_image_that_carries_them_fits(catalog):
    plain = pipeline.optimise(DDP, catalog)
    asked = pipeline.optimise(with_packages(["accelerate==1.15.0"]), catalog)
    assert asked.choice.source == "recipe" and asked.choice.uri != plain.choice.uri
    mine = ImageCatalog.from_data({"images": [{"name": "t", "uri": "docker://localhost:5000/t:1",
                                               "framework": "pytorch", "version": "2.13.0", "build": "optimised-pip"}]})
    chosen = pipeline.optimise(with_packages(["accelerate==1.15.0"]), mine)
    assert chosen.choice.uri != "docker://localhost:5000/t:1"
    assert any("carries no accelerate==1.15.0 (python_packages)" in line for line in chosen.explanation)
    assert pipeline.optimise(DDP, mine).choice.uri == "docker://localhost:5000/t:1"


@pytest.mark.parametrize("bad", ["accelerate", "accelerate>=1.0", "accelerate==1.0; rm -rf /", "-r x.txt",
                                 "git+https://x/y"])
def test_unpinned_or_hostile_requirements_are_refused_by_path(bad):
    with pytest.raises(DslInvalid) as info:
        dsl.parse(with_packages([bad]))
    assert [p.path for p in info.value.problems] == ["job.optimisation.opt_build.python_packages[0]"]


def test_the_built_images_catalog_entry_says_what_it_carries():
    recipe, _texts = generate.render(spec_of(with_packages(["accelerate==1.15.0"])), formats=("docker",))
    entry = recipe.catalog_entry("docker://localhost:5000/modak/pytorch:2.13.0-cpu")
    assert entry["python_packages"] == ["accelerate==1.15.0"]
    assert not any("python_packages" in key for key in recipe.labels)
    built = ImageCatalog.from_data({"images": [dict(entry, name="built")]})
    chosen = pipeline.optimise(with_packages(["accelerate==1.15.0"]), built)
    assert chosen.choice.uri == "docker://localhost:5000/modak/pytorch:2.13.0-cpu"
