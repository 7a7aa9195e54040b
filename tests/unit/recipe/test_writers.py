"""Golden text per writer, and the definition files read back with spython."""

from __future__ import annotations

import os
import subprocess

import pytest
from spython.main.parse.parsers import SingularityParser
from spython.main.parse.writers import DockerWriter

from ansible_collections.sodalite.modak.plugins.module_utils import dsl
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import docker, spec, singularity

from cases import CASES

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
WRITERS = {"def": singularity, "Dockerfile": docker}


def recipe(name):
    return spec.from_spec(spec.spec_of(dsl.parse(CASES[name])))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("ext", sorted(WRITERS))
def test_golden(name, ext):
    text = WRITERS[ext].write(recipe(name))
    path = os.path.join(GOLDEN, "%s.%s" % (name, ext))
    if os.environ.get("MODAK_REGOLD"):
        with open(path, "w") as handle:
            handle.write(text)
    with open(path) as handle:
        assert text == handle.read()


@pytest.mark.parametrize("name", sorted(CASES))
def test_spython_reads_the_definition_file(name, tmp_path):
    r = recipe(name)
    path = tmp_path / "Singularity.def"
    path.write_text(singularity.write(r))
    stage = SingularityParser(str(path)).recipe["spython-base"]
    assert stage.fromHeader == r.base_image
    labels = dict(line.split(" ", 1) for line in stage.labels)
    assert labels == r.labels
    assert "modak.recipe.sha256" in labels
    assert stage.cmd  # the runscript
    assert "set -eu" in stage.install
    converted = DockerWriter({"spython-base": stage}).convert()
    assert converted.startswith("FROM %s" % r.base_image)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shell_sections_pass_bash_n(name, tmp_path):
    text = singularity.write(recipe(name))
    sections, current = {}, None
    for line in text.splitlines():
        if line.startswith("%"):
            current = line[1:]
            sections[current] = []
        elif current and line.startswith("    "):
            sections[current].append(line[4:])
    for section in ("post", "environment", "runscript", "test"):
        if section in sections:
            script = tmp_path / ("%s.sh" % section)
            script.write_text("#!/bin/bash\n" + "\n".join(sections[section]) + "\n")
            subprocess.run(["bash", "-n", str(script)], check=True)


def test_same_hash_for_both_formats_and_changes_with_the_model():
    a, b = recipe("pytorch-spr-source"), recipe("pytorch-rocm-pip")
    assert a.sha256 in singularity.write(a) and a.sha256 in docker.write(a)
    assert a.sha256 != b.sha256
    assert a.sha256 == recipe("pytorch-spr-source").sha256


def test_labels_use_the_catalog_attribute_names():
    r = recipe("pytorch-spr-source")
    assert r.labels["modak.framework"] == "pytorch"
    assert r.labels["modak.build"] == "optimised-source"
    assert r.labels["modak.isa"] == "x86-64-v4"
    assert "amx_tile" in r.labels["modak.cpu_features"].split(",")
    assert r.labels["modak.compilers"] == "inductor"
    assert r.labels["modak.math"] == "mkl,onednn"
    entry = r.catalog_entry("docker://localhost:5000/modak/x:1")
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    image = ImageCatalog.from_data([entry]).images[0]
    assert (image.build, image.isa, image.compilers) == ("optimised-source", "x86-64-v4", ("inductor",))
