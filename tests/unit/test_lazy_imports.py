"""Heavy libraries load only on the paths that use them: a plain optimise never imports them."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT

HEAVY = ("numpy", "scipy", "sklearn", "matplotlib")
PROBE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.modules import optimise, container_recipe, perf_model  # noqa
from ansible_collections.sodalite.modak.plugins.module_utils import cli, dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
catalog = ImageCatalog.from_file(sys.argv[2] + "/catalog/images.yaml")
pipeline.optimise(dsl.load_file(sys.argv[2] + "/examples/pytorch-cpu-slurm.yaml"), catalog)
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[3:])))
"""


def test_a_plain_optimise_imports_no_heavy_library():
    done = subprocess.run([sys.executable, "-c", PROBE, ROOT + "/collections", ROOT] + list(HEAVY),
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_the_performance_model_still_finds_its_libraries():
    from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, report
    assert predictor.HAS_SKLEARN and report.HAS_MATPLOTLIB


OPTIMISE_PROBE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.modules import optimise  # noqa
from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, recipe_images
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
catalog = ImageCatalog.from_file(sys.argv[2] + "/catalog/images.yaml", build_prefix="docker://127.0.0.1:9/modak")
result = pipeline.optimise(dsl.load_file(sys.argv[2] + "/examples/pytorch-cpu-slurm.yaml"), catalog)
recipe_images.availability(result.choice, timeout=2)
prefix = "ansible_collections.sodalite.modak.plugins.module_utils."
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[3:]
                      or m.startswith(prefix + "perf") or m == prefix + "oci_catalog")))
"""


def test_an_optimise_task_loads_neither_requests_nor_the_registry_reader_nor_the_model():
    """requests (0.1 s), the registry reader and the performance model load only for registries or a store."""
    done = subprocess.run([sys.executable, "-c", OPTIMISE_PROBE, ROOT + "/collections", ROOT,
                           "requests", "urllib3", "http", "numpy", "sklearn"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
