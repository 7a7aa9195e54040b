"""Recipes are structural: the writers refuse a primitive they have no form for, and OS packages are installed
by the base image's distribution family (apt for Debian and Ubuntu, dnf for the RHEL family), as hpccm's
packages(apt=..., yum=...) building block does."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import dsl
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks, docker, singularity, spec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError
from helpers import ai_doc


class Unknown(object):
    """A primitive no writer knows."""


class Odd(blocks.Block):
    title = "odd"

    def primitives(self):
        return [Unknown()]


@pytest.mark.parametrize("writer", [docker, singularity], ids=["docker", "singularity"])
def test_a_writer_refuses_a_primitive_it_has_no_form_for(writer):
    recipe = spec.from_spec(spec.spec_of(dsl.parse(ai_doc("pytorch", "2.5"))))
    recipe.blocks.append(Odd())
    with pytest.raises(RecipeError, match="no form for the primitive Unknown"):
        writer.write(recipe)


@pytest.mark.parametrize("image, family", [
    ("debian:bookworm-slim", "apt"), ("localhost/modak/debian:bookworm", "apt"),
    ("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "apt"), ("rockylinux:9", "dnf"),
    ("registry.example.org:5000/almalinux/9-base:latest", "dnf"), ("registry.access.redhat.com/ubi9/ubi", "dnf"),
    ("fedora:40", "dnf"), ("quay.io/centos/centos:stream9", "dnf"),
])
def test_the_family_follows_the_base_image(image, family):
    assert blocks.BaseImage(image=image).family == family


def test_a_rhel_family_base_installs_with_dnf_and_its_own_names():
    recipe = spec.from_spec(spec.spec_of(dsl.parse(ai_doc("pytorch", "2.5"))), base_image="rockylinux:9")
    text = docker.write(recipe)
    assert "apt-get" not in text
    assert "dnf install -y --setopt=install_weak_deps=False" in text and "dnf clean all" in text
    assert "python3-pip" in text and "python3-venv" not in text
    assert "dnf install" in singularity.write(recipe)


def test_the_family_changes_the_recipe_hash_but_debian_recipes_keep_theirs():
    request = dsl.parse(ai_doc("pytorch", "2.5"))
    debian = spec.from_spec(spec.spec_of(request))
    assert spec.from_spec(spec.spec_of(request), base_image="rockylinux:9").sha256 != debian.sha256
    assert blocks.OsPackages(["git"]).as_dict() == {"block": "os packages", "packages": ["git"]}


def test_a_package_without_a_known_dnf_name_is_refused():
    with pytest.raises(RecipeError, match="no dnf package is known for the Debian package bazel-bootstrap"):
        blocks.OsPackages(["git", "bazel-bootstrap"], family="dnf")
    assert blocks.OsPackages(["build-essential"], family="dnf").dnf == ("gcc", "gcc-c++", "make")
