"""The PyTorch CPU recipe: a local base, the pinned CPU wheel from the build context, the tuned runtime."""

from __future__ import annotations

import os

import pytest

from helpers import spec_of

from ansible_collections.sodalite.modak.plugins.module_utils import dsl
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks, docker, spec, singularity

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "localhost/modak/debian:bookworm"
DOC = {"job": {"application": {"executable": "python3 train.py"},
               "optimisation": {"app_type": "ai_training", "opt_build": {"cpu_type": "x86"},
                                "app_type-ai_training": {"config": {"ai_framework": "pytorch"},
                                                         "ai_framework-pytorch": {"version": "2.13.0"}}}}}


def recipe(**kw):
    return spec.from_spec(spec.spec_of(dsl.parse(DOC)), **kw)


@pytest.mark.parametrize("ext,writer", [("Dockerfile", docker), ("def", singularity)])
def test_golden_pytorch_cpu_from_wheels(ext, writer):
    text = writer.write(recipe(base_image=BASE, wheels=True))
    path = os.path.join(HERE, "golden", "pytorch-cpu-wheels.%s" % ext)
    if os.environ.get("MODAK_REGOLD"):
        with open(path, "w") as handle:
            handle.write(text)
    with open(path) as handle:
        assert text == handle.read()


def test_wheels_replace_the_index_and_are_removed_after_the_install():
    text = docker.write(recipe(base_image=BASE, wheels=True))
    assert "FROM %s\n" % BASE in text
    assert "COPY wheels /opt/modak/wheels\n" in text
    assert "pip install --no-cache-dir --no-index --find-links /opt/modak/wheels torch==2.13.0 && \\\n" \
           "    rm -rf /opt/modak/wheels" in text
    assert "download.pytorch.org" not in text
    assert "download.pytorch.org" in docker.write(recipe())       # without wheels: PyTorch's CPU index


def test_pytorch_wheels_get_no_mkl_wheel_but_keep_the_label():
    r = recipe()
    assert "pip install --no-cache-dir mkl" not in docker.write(r)
    assert "mkl" in r.attributes["math"]


def test_tuned_runtime_in_the_image():
    r = recipe()
    env = dict(p for b in r.blocks if isinstance(b, blocks.TunedRuntime) for p in b.variables)
    assert env["OMP_PROC_BIND"] == "close" and env["OMP_PLACES"] == "cores"
    assert "libjemalloc2" in [b for b in r.blocks if isinstance(b, blocks.OsPackages)][0].packages


def test_jemalloc_is_installed_but_never_preloaded_by_default():
    """Before: the image preloaded jemalloc, which made training 1.3x slower than the official image's system
    allocator on the project machine (docs/performance.md); a job asks for it in its own environment."""
    r = recipe()
    env = dict(p for b in r.blocks if isinstance(b, blocks.TunedRuntime) for p in b.variables)
    assert "LD_PRELOAD" not in env and "MALLOC_CONF" not in env
    assert "LD_PRELOAD" not in docker.write(r)
    tuned = blocks.TunedRuntime("x86_64", preload=True)
    assert dict(tuned.variables)["LD_PRELOAD"] == "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    assert dict(tuned.preload_variables) == dict(blocks.TunedRuntime("x86_64").preload_variables)


def test_wheels_change_the_recipe_hash():
    assert recipe(wheels=True).sha256 != recipe().sha256
    assert recipe(base_image=BASE).sha256 != recipe().sha256


def test_gpu_images_get_no_tuned_cpu_runtime():
    doc = dict(DOC)
    gpu = spec.from_spec(spec.spec_of(dsl.parse({"job": dict(doc["job"], optimisation=dict(
        doc["job"]["optimisation"], opt_build={"cpu_type": "x86", "acc_type": "nvidia", "cuda_version": "12.4"}))})))
    assert not any(isinstance(b, blocks.TunedRuntime) for b in gpu.blocks)


def test_write_places_the_wheels_in_the_build_context(tmp_path):
    from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
    wheels = tmp_path / "wheelhouse"
    wheels.mkdir()
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"wheel")
    (wheels / "notes.txt").write_text("ignored")
    out = tmp_path / "ctx"
    first = generate.write(spec_of(DOC), str(out), ["docker"], BASE, wheels=str(wheels))
    assert first["changed"]
    assert sorted(p.name for p in (out / "wheels").iterdir()) == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]
    assert "COPY wheels /opt/modak/wheels" in (out / "Dockerfile").read_text()
    assert not generate.write(spec_of(DOC), str(out), ["docker"], BASE, wheels=str(wheels))["changed"]


def test_an_empty_wheel_directory_is_an_error(tmp_path):
    from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
    from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
    with pytest.raises(OutputError, match="holds no .whl file"):
        generate.write(spec_of(DOC), str(tmp_path / "ctx"), ["docker"], BASE, wheels=str(tmp_path))


def test_the_allocator_starts_no_thread():
    """Before: background_thread:true; ch-image build's next RUN failed (ch-run: can't init user+mount namespaces)."""
    assert "background_thread" not in blocks.TunedRuntime.MALLOC_CONF
