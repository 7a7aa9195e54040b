# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AI frameworks modak knows: one entry each, read by the schema, the matcher, the settings and the recipes.

Adding a framework is one ``Framework(...)`` entry in ``FRAMEWORKS`` (see docs/development.md,
"Adding a framework"); nothing else names a framework's facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class SourceBuild:
    """How a framework is built from its sources (a git repository, a tag per release, shell steps)."""

    repository: str
    steps: Tuple[str, ...]
    tag: str = "v{version}"
    packages: Tuple[str, ...] = ()   # distribution packages the build needs beyond a C/C++ toolchain


@dataclass(frozen=True)
class Framework:
    """One AI framework.

    name: the DSL's name (``ai_framework``). pip: the pip requirement name. module: the import name.
    default_version: the release pinned when the DSL asks for ``latest`` or gives no version.
    switches: the DSL's boolean ``ai_framework-<name>`` options besides ``version``, {option: (the feature it
    asks for, description)}, e.g. pytorch's ``compile`` asks for ``inductor``. choices: the DSL's options that
    take one of a few words, {option: (words, description)}.
    bundled: the graph compilers every image of it ships (labelled on every image).
    env: environment switches, {feature: ((variable, value), ...)}: ``xla``/``onednn`` when that feature is
    asked for and the image offers it, ``onednn_math`` when the image ships oneDNN.
    source: how to build it from source, or None.
    cuda: {release line: the CUDA version that release was built and tested with}, used when the DSL names
    none (TensorFlow: the "tested build configurations" table of its install guide; PyTorch: the CUDA of
    the default wheel on PyPI for that release).
    gpu_images: the framework's own published GPU images, ((first release line, reference with ``{release}``), ...)
    in ascending order, each applying from its line on: the base of a GPU recipe whose CUDA line has no published
    CUDA base image with cuDNN (an old release).
    """

    name: str
    pip: str
    module: str
    default_version: str
    switches: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    choices: Dict[str, Tuple[Tuple[str, ...], str]] = field(default_factory=dict)
    bundled: Tuple[str, ...] = ()
    env: Dict[str, Tuple[Tuple[str, str], ...]] = field(default_factory=dict)
    source: Optional[SourceBuild] = None
    cuda: Dict[str, str] = field(default_factory=dict)
    gpu_images: Tuple[Tuple[str, str], ...] = ()

    def gpu_image(self, release):
        """The framework's own published GPU image of ``release`` (e.g. 2.1.0), or None when none is known."""
        found = None
        for line, reference in self.gpu_images:
            if _line(release) >= _line(line):
                found = reference
        return found.format(release=release) if found else None


def _line(version):
    """'2.1.0' -> (2, 1): a release line (plain data: the version module is the matcher's)."""
    return tuple(int(part) for part in str(version).split(".")[:2] if part.isdigit())


XLA_FLAGS = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"

FRAMEWORKS = {f.name: f for f in (
    Framework(
        "tensorflow", pip="tensorflow", module="tensorflow", default_version="2.15.1",
        switches={"xla": ("xla", "Use the XLA graph compiler.")}, bundled=("xla",),
        env={"xla": (("TF_XLA_FLAGS", XLA_FLAGS),), "onednn_math": (("TF_ENABLE_ONEDNN_OPTS", "1"),)},
        source=SourceBuild(
            "https://github.com/tensorflow/tensorflow.git", (
                "pip install --no-cache-dir numpy wheel packaging requests opt_einsum",
                "bazel build --config=opt --config=mkl --copt=\"$CFLAGS\" --jobs=$MODAK_JOBS "
                "//tensorflow/tools/pip_package:wheel",
                "pip install --no-cache-dir bazel-bin/tensorflow/tools/pip_package/wheel_house/*.whl",
            ), packages=("bazel-bootstrap",)),
        cuda={"1.13": "10.0", "1.14": "10.0", "1.15": "10.0", "2.0": "10.0", "2.1": "10.1", "2.2": "10.1",
              "2.3": "10.1", "2.4": "11.0", "2.5": "11.2", "2.6": "11.2", "2.7": "11.2", "2.8": "11.2",
              "2.9": "11.2", "2.10": "11.2", "2.11": "11.2", "2.12": "11.8", "2.13": "11.8", "2.14": "11.8",
              "2.15": "12.2", "2.16": "12.3", "2.17": "12.3", "2.18": "12.5", "2.19": "12.5"},
        # Docker Hub's tensorflow/tensorflow: Python 3 GPU images are -gpu-py3 up to 2.1, -gpu from 2.2
        gpu_images=(("1.13", "tensorflow/tensorflow:{release}-gpu-py3"), ("2.2", "tensorflow/tensorflow:{release}-gpu"))),
    Framework(
        "pytorch", pip="torch", module="torch", default_version="2.5.1",
        switches={"glow": ("glow", "Use the Glow graph compiler."),
                  "compile": ("inductor", "Use torch.compile (inductor).")},
        source=SourceBuild(
            "https://github.com/pytorch/pytorch.git", (
                "pip install --no-cache-dir -r requirements.txt mkl-static mkl-include",
                "USE_CUDA=0 USE_MKLDNN=1 BLAS=MKL MAX_JOBS=$MODAK_JOBS python3 setup.py bdist_wheel",
                "pip install --no-cache-dir dist/*.whl",
            )),
        cuda={"1.13": "11.7", "2.0": "11.7", "2.1": "12.1", "2.2": "12.1", "2.3": "12.1", "2.4": "12.1",
              "2.5": "12.4", "2.6": "12.4", "2.7": "12.6"}),
    Framework(
        "keras", pip="keras", module="keras", default_version="3.3.3",
        switches={"xla": ("xla", "Use XLA (through the TensorFlow or JAX backend).")},
        choices={"backend": (("tensorflow", "jax", "torch", "theano", "cntk"), "Keras backend.")},
        env={"xla": (("TF_XLA_FLAGS", XLA_FLAGS),), "onednn_math": (("TF_ENABLE_ONEDNN_OPTS", "1"),)}),
    Framework(
        "mxnet", pip="mxnet", module="mxnet", default_version="1.9.1",
        switches={"onednn": ("onednn", "Use the oneDNN subgraph backend.")},
        env={"onednn": (("MXNET_SUBGRAPH_BACKEND", "ONEDNN"),)}),
    Framework("jax", pip="jax[cpu]", module="jax", default_version="0.4.30", bundled=("xla",)),
    Framework("cntk", pip="cntk", module="cntk", default_version=""),
)}


def get(name):
    """The Framework of a DSL name (KeyError when unknown)."""
    return FRAMEWORKS[name]


def names():
    return tuple(FRAMEWORKS)


def default_versions():
    return {f.name: f.default_version for f in FRAMEWORKS.values() if f.default_version}


def pip_packages():
    return {f.name: f.pip for f in FRAMEWORKS.values()}


def source_builds():
    return {f.name: f.source for f in FRAMEWORKS.values() if f.source is not None}


def cuda_releases():
    """{framework: {release line: CUDA version}} for the frameworks that know theirs."""
    return {f.name: dict(f.cuda) for f in FRAMEWORKS.values() if f.cuda}


def env_for(name, feature):
    """The environment switches of a framework for a chosen feature (empty when it has none)."""
    found = FRAMEWORKS.get(name)
    return tuple(found.env.get(feature, ())) if found else ()
