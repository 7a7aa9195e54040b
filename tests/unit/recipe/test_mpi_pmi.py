"""MPI recipes say which PMI their MPI speaks; the label travels to the catalog entry and the Image."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, oci_catalog
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks, docker, spec


def hpc(library, version=None):
    mpi = {"library": library}
    if version:
        mpi["version"] = version
    return dsl.parse({"job": {"application": {"executable": "./a"},
                              "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                                               "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                                "parallelisation-mpi": mpi}}}})


@pytest.mark.parametrize("library,pmi", [("openmpi", "pmix"), ("mpich", "pmi2")])
def test_the_recipe_labels_the_pmi_and_the_catalog_entry_carries_it(library, pmi):
    recipe = spec.from_spec(spec.spec_of(hpc(library)))
    assert recipe.labels["modak.mpi_pmi"] == pmi
    assert 'modak.mpi_pmi="%s"' % pmi in docker.write(recipe)
    entry = recipe.catalog_entry("docker://reg.example/x:1")
    assert entry["mpi"]["pmi"] == pmi
    image = ImageCatalog.from_data({"images": [entry]}, "test").images[0]
    assert image.mpi_pmi == pmi and image.as_dict()["mpi_pmi"] == pmi


def test_an_open_mpi_source_build_is_configured_for_pmix_and_slurm():
    block = blocks.MpiLibrary("openmpi", version="3.1.3")
    configure = [c for prim in block.primitives() if isinstance(prim, blocks.Shell)
                 for c in prim.commands if c.startswith("./configure")]
    assert configure == ["./configure --prefix=/usr/local --with-pmix --with-slurm"]
    assert block.pmi == "pmix" and block.as_dict()["pmi"] == "pmix"


def test_an_mpich_source_build_keeps_its_builtin_pmi_client():
    block = blocks.MpiLibrary("mpich", version="3.4.3")
    configure = [c for prim in block.primitives() if isinstance(prim, blocks.Shell)
                 for c in prim.commands if "./configure" in c]
    assert configure == ["FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch "
                         "./configure --prefix=/usr/local"]
    assert block.pmi == "pmi2"


def test_registry_labels_become_the_catalog_pmi():
    entry = oci_catalog.entry_from_labels({"modak.framework": "mpich", "modak.version": "4.0.2",
                                           "modak.kind": "mpi", "modak.mpi": "mpich",
                                           "modak.mpi_version": "4.0.2", "modak.mpi_pmi": "pmi2"},
                                          "docker://reg.example/mpich:4", "mpich")
    assert entry["mpi"] == {"library": "mpich", "version": "4.0.2", "pmi": "pmi2"}


def test_a_catalog_pmi_outside_slurms_plugins_is_refused():
    with pytest.raises(CatalogError, match="pmi"):
        ImageCatalog.from_data({"images": [{"name": "x", "uri": "docker://r/x:1", "framework": "mpich",
                                            "version": "4", "kind": "mpi",
                                            "mpi": {"library": "mpich", "pmi": "pmi3"}}]}, "test")
