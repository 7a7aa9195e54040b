"""The embedded catalog as data (plugins/module_utils/embedded_catalog.py) is catalog/images.yaml, checked and
resolved: it is current, and it gives the images that reading the YAML file gives."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import catalog as catalog_module
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError

YAML = os.path.join(ROOT, "catalog", "images.yaml")


def test_the_generated_module_is_current():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_catalog.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("prefix", [None, "docker://registry.example.org:5000/site", "/shared/images"])
def test_the_embedded_images_are_those_of_the_yaml_file(prefix):
    build = {"build_prefix": prefix} if prefix else {}
    assert catalog_module.embedded(**build).images == ImageCatalog.from_file(YAML, **build).images


def test_a_base_image_resolves_the_recipes_again():
    base = "localhost:5000/modak/debian:bookworm"
    embedded = catalog_module.embedded(base_image=base)
    assert embedded.images == ImageCatalog.from_file(YAML, base_image=base).images
    assert embedded.images != catalog_module.embedded().images


def test_a_bad_build_prefix_is_refused_as_before():
    with pytest.raises(CatalogError, match="build prefix"):
        catalog_module.embedded(build_prefix="ftp://x")
