# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Building blocks of a container recipe (hpccm is the model: one class per block).

A block knows *what* goes into the image and turns it into a short list of primitives
(``From``, ``Comment``, ``Shell``, ``Env``, ``Label``, ``Runscript``, ``Test``). The writers
(``singularity.py``, ``docker.py``) only know how to print primitives, so both formats
always say the same thing. Every value a block receives is checked here against a strict
pattern (``RecipeError`` otherwise) or quoted by the writer; no template engine is involved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Tuple

from ansible_collections.sodalite.modak.plugins.module_utils import frameworks, image_refs, labels, mpi, shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError

IMAGE = image_refs.NAME
PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_-]{0,127}\Z")
PIP_SPEC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[a-z0-9,_-]+\])?((==|>=|<=|~=)[0-9][0-9.*]*)?\Z")
VERSION = re.compile(r"^\d+(\.\d+){0,3}\Z")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
LABEL_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}\Z")
URL = re.compile(r"^https://[A-Za-z0-9._~/:@%+-]{1,512}\Z")
FLAG = re.compile(r"^-m(arch|cpu|tune)=[a-z0-9._-]{1,64}\Z")
ONE_LINE = re.compile("^[^\x00-\x1f\x7f\x85\u2028\u2029]*\\Z")


# words of an image reference that name a distribution of the RHEL family (its packages install with dnf)
RHEL_FAMILY = ("rockylinux", "almalinux", "fedora", "centos", "redhat", "rhel", "ubi", "oraclelinux", "amazonlinux")


class RecipeError(ModakError):
    """A recipe cannot be made from the request (names the value and why)."""


def check(pattern, value, what):
    text = str(value)
    if not pattern.match(text):
        raise RecipeError("%s %r is not allowed in a recipe (must match %s)" % (what, text, pattern.pattern))
    return text


# ---------------------------------------------------------------- primitives

@dataclass(frozen=True)
class From(object):
    image: str


@dataclass(frozen=True)
class Comment(object):
    text: str


@dataclass(frozen=True)
class Shell(object):
    commands: Tuple[str, ...]  # shell text made by blocks from checked values


@dataclass(frozen=True)
class Files(object):
    pairs: Tuple[Tuple[str, str], ...]  # (path in the build context, path in the image)


@dataclass(frozen=True)
class Env(object):
    pairs: Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class Label(object):
    pairs: Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class Runscript(object):
    default_argv: Tuple[str, ...]


@dataclass(frozen=True)
class Test(object):
    commands: Tuple[str, ...]


# ---------------------------------------------------------------- blocks

class Block(object):
    """Base: ``primitives()`` returns the block's instructions; ``as_dict()`` what it holds."""

    title = "block"

    def primitives(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def as_dict(self):
        return {"block": self.title}


class BaseImage(Block):
    """The image everything else is installed on.

    # Parameters

    accelerator: ``none`` (a CPU distribution), ``nvidia`` (a CUDA base) or ``amd`` (a ROCm base).
    Default ``none``.

    cuda: CUDA version of the CUDA base, e.g. ``12.4`` (needed for ``nvidia``).

    image: an explicit base image reference; replaces the one chosen from the other parameters.

    rocm: ROCm version of the ROCm base, e.g. ``6.1`` (needed for ``amd``).

    # Examples

    ```python
    BaseImage()                                  # debian:bookworm-slim
    BaseImage(accelerator="nvidia", cuda="12.4") # nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
    BaseImage(accelerator="amd", rocm="6.1")     # rocm/dev-ubuntu-22.04:6.1
    ```
    """

    title = "base image"
    CPU = "debian:bookworm-slim"
    # CUDA line -> the published nvidia/cuda runtime tag with cuDNN (cuDNN 8 up to 12.2, cuDNN 9 after)
    CUDA_TAGS = {"11.8": "11.8.0-cudnn8-runtime-ubuntu22.04", "12.1": "12.1.1-cudnn8-runtime-ubuntu22.04",
                 "12.2": "12.2.2-cudnn8-runtime-ubuntu22.04", "12.3": "12.3.2-cudnn9-runtime-ubuntu22.04",
                 "12.4": "12.4.1-cudnn-runtime-ubuntu22.04", "12.5": "12.5.1-cudnn-runtime-ubuntu22.04",
                 "12.6": "12.6.3-cudnn-runtime-ubuntu22.04"}

    def __init__(self, accelerator="none", cuda=None, rocm=None, image=None):
        self.accelerator = accelerator
        self.cuda = check(VERSION, cuda, "cuda version") if cuda else None
        self.rocm = check(VERSION, rocm, "rocm version") if rocm else None
        if accelerator == "nvidia" and not self.cuda:
            raise RecipeError("an NVIDIA base image needs a CUDA version (opt_build.cuda_version)")
        if accelerator == "amd" and not self.rocm:
            raise RecipeError("an AMD base image needs a ROCm version (opt_build.rocm_version)")
        if image:
            self.image = check(IMAGE, image, "base image")
        elif accelerator == "nvidia":
            short = ".".join(self.cuda.split(".")[:2])
            if short not in self.CUDA_TAGS:
                raise RecipeError("no published CUDA base image with cuDNN on Ubuntu 22.04 is known for CUDA %s "
                                  "(known: %s); give the recipe a base image" % (self.cuda, ", ".join(self.CUDA_TAGS)))
            self.image = "nvidia/cuda:%s" % self.CUDA_TAGS[short]
        elif accelerator == "amd":
            self.image = "rocm/dev-ubuntu-22.04:%s" % self.rocm
        else:
            self.image = self.CPU

    @property
    def family(self):
        """The distribution family of the image, which says how packages are installed: ``dnf`` for the RHEL
        family (Rocky, Alma, Fedora, CentOS, UBI, Oracle Linux, Amazon Linux, named in the reference), else
        ``apt`` (Debian, Ubuntu)."""
        words = re.split(r"[/:@]", self.image.lower())
        return "dnf" if any(word.startswith(RHEL_FAMILY) for word in words) else "apt"

    @property
    def distro(self):
        return "ubuntu22.04" if self.accelerator in ("nvidia", "amd") and self.image.startswith(
            ("nvidia/", "rocm/")) else "debian12"

    def primitives(self):
        return [From(self.image)]

    def as_dict(self):
        return {"block": self.title, "image": self.image, "accelerator": self.accelerator,
                "cuda": self.cuda, "rocm": self.rocm}


class OsPackages(Block):
    """Distribution packages by family, as hpccm's ``packages(apt=..., yum=...)``: apt (Debian, Ubuntu) installs
    in one layer and removes the lists; dnf (the RHEL family) installs without weak dependencies and cleans its
    cache.

    # Parameters

    packages: the Debian package names (sorted, duplicates dropped).

    family: ``apt`` (default) or ``dnf``, the base image's (BaseImage.family).

    dnf: the RHEL family's package names; default: each Debian name through DNF_NAMES (a name it does not
    know is refused).

    # Examples

    ```python
    OsPackages(["python3", "python3-venv"])
    OsPackages(["build-essential", "git"], family="dnf")     # gcc gcc-c++ make git
    ```
    """

    title = "os packages"

    def __init__(self, packages, family="apt", dnf=None):
        self.packages = tuple(sorted(set(check(PACKAGE, p, "package") for p in packages)))
        if family not in ("apt", "dnf"):
            raise RecipeError("unknown package family %r (apt, dnf)" % (family,))
        self.family = family
        self.dnf = None
        if family == "dnf":
            if dnf is None:
                missing = [p for p in self.packages if p not in DNF_NAMES]
                if missing:
                    raise RecipeError("no dnf package is known for the Debian package %s: give the recipe a Debian or "
                                      "Ubuntu base image" % ", ".join(missing))
                dnf = [name for p in self.packages for name in DNF_NAMES[p]]
            self.dnf = tuple(sorted(set(check(PACKAGE, p, "package") for p in dnf)))

    def primitives(self):
        if self.family == "dnf":
            return [Comment("os packages"), Shell((
                "dnf install -y --setopt=install_weak_deps=False %s" % " ".join(self.dnf),
                "dnf clean all",
            ))] if self.dnf else []
        if not self.packages:
            return []
        return [Comment("os packages"), Shell((
            "apt-get update",
            "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends %s" % " ".join(self.packages),
            "rm -rf /var/lib/apt/lists/*",
        ))]

    def as_dict(self):
        out = {"block": self.title, "packages": list(self.packages)}
        if self.family != "apt":          # a Debian recipe keeps the hash it always had
            out.update(family=self.family, dnf=list(self.dnf))
        return out


# the RHEL family's names of the Debian packages recipes install (python3-venv is part of python3 there)
DNF_NAMES = {
    "build-essential": ("gcc", "gcc-c++", "make"), "ca-certificates": ("ca-certificates",), "cmake": ("cmake",),
    "curl": ("curl",), "g++": ("gcc-c++",), "gfortran": ("gcc-gfortran",), "git": ("git",),
    "libjemalloc2": ("jemalloc",), "libmpich-dev": ("mpich-devel",), "libopenmpi-dev": ("openmpi-devel",),
    "mpich": ("mpich",), "ninja-build": ("ninja-build",), "openmpi-bin": ("openmpi",), "perl": ("perl",),
    "python3": ("python3",), "python3-pip": ("python3-pip",), "python3-venv": (),
}


VENV = "/opt/modak/venv"


class PythonEnv(Block):
    """A Python virtual environment at /opt/modak/venv, first on PATH (Debian refuses system pip installs).

    # Examples

    ```python
    PythonEnv()
    ```
    """

    title = "python environment"

    def primitives(self):
        return [Comment("python environment"), Shell(("python3 -m venv %s" % VENV,
                                                      "%s/bin/pip install --no-cache-dir --upgrade pip" % VENV)),
                Env((("PATH", "%s/bin:$PATH" % VENV),))]


class FrameworkPip(Block):
    """A framework from pip with a pinned version.

    # Parameters

    framework: DSL framework name (tensorflow, pytorch, keras, mxnet, jax).

    index_url: an extra pip index (PyTorch's CPU/CUDA/ROCm wheel indexes). Default none.

    version: version to pin, ``2.5`` (becomes ``==2.5.*``) or ``2.5.1`` (``==2.5.1``).

    wheels: install the framework and its dependencies from the ``wheels/`` directory of the build context
    only (copied to /opt/modak/wheels, ``pip --no-index --find-links``, removed after the install) instead of
    ``index_url``: a pinned, offline-reproducible install for sites whose builders reach no package index.

    # Examples

    ```python
    FrameworkPip("pytorch", "2.5", index_url="https://download.pytorch.org/whl/cpu")
    FrameworkPip("pytorch", "2.13.0", wheels=True)   # the pinned torch-2.13.0+cpu wheel from wheels/
    ```
    """

    title = "framework (pip)"
    PACKAGES = frameworks.pip_packages()

    WHEELS = ("wheels", "/opt/modak/wheels")

    def __init__(self, framework, version, index_url=None, extra=(), wheels=False):
        if framework not in self.PACKAGES:
            raise RecipeError("no pip package is known for the framework %r" % framework)
        self.framework = framework
        self.version = check(VERSION, version, "framework version")
        self.wheels = bool(wheels)
        self.index_url = check(URL, index_url, "pip index") if index_url and not self.wheels else None
        self.extra = tuple(check(PIP_SPEC, e, "pip requirement") for e in extra)

    @property
    def requirement(self):
        pin = self.version if self.version.count(".") >= 2 else self.version + ".*"
        return "%s==%s" % (self.PACKAGES[self.framework], pin)

    def primitives(self):
        words = ["pip", "install", "--no-cache-dir"]
        if self.index_url:
            words.extend(["--extra-index-url", self.index_url])
        if self.wheels:
            words.extend(["--no-index", "--find-links", self.WHEELS[1]])
        words.append(self.requirement)
        words.extend(self.extra)
        out = [Comment("%s %s from pip" % (self.framework, self.version))]
        if self.wheels:
            out.append(Files((self.WHEELS,)))
            return out + [Shell((shell.join(words), "rm -rf %s" % self.WHEELS[1]))]
        return out + [Shell((shell.join(words),))]

    def as_dict(self):
        out = {"block": self.title, "framework": self.framework, "version": self.version,
               "requirement": self.requirement, "index_url": self.index_url, "extra": list(self.extra)}
        if self.wheels:
            out["wheels"] = True
        return out


class PythonPackages(Block):
    """Pinned Python packages installed after a framework built from its sources (a launcher such as accelerate).

    # Parameters

    requirements: pip requirements, each pinned with '=='.

    # Examples

    ```python
    PythonPackages(["accelerate==1.15.0"])
    ```
    """

    title = "python packages"

    def __init__(self, requirements):
        self.requirements = tuple(check(PIP_SPEC, r, "pip requirement") for r in requirements)

    def primitives(self):
        return [Comment("python packages: %s" % ", ".join(self.requirements)),
                Shell((shell.join(["pip", "install", "--no-cache-dir"] + list(self.requirements)),))]

    def as_dict(self):
        return {"block": self.title, "requirements": list(self.requirements)}


class FrameworkSource(Block):
    """A framework built from its sources with CPU flags for the target microarchitecture.

    # Parameters

    cpu_flags: compiler flags from ``march_flags`` (e.g. ``-march=sapphirerapids``).

    framework: ``pytorch`` or ``tensorflow``.

    jobs: parallel compile jobs. Default 8.

    version: the release to build (``2.5.1``; the git tag is ``v2.5.1``).

    # Examples

    ```python
    FrameworkSource("pytorch", "2.5.1", ["-march=sapphirerapids", "-mtune=sapphirerapids"])
    ```
    """

    title = "framework (source build)"
    SOURCES = {name: (build.repository, build.steps) for name, build in frameworks.source_builds().items()}

    def __init__(self, framework, version, cpu_flags, jobs=8):
        if framework not in self.SOURCES:
            raise RecipeError("a source build is known for pytorch and tensorflow only, not %r" % framework)
        self.framework = framework
        self.version = check(VERSION, version, "framework version")
        if self.version.count(".") != 2:
            raise RecipeError("a source build needs a full release version such as 2.5.1, not %r" % version)
        self.cpu_flags = tuple(check(FLAG, f, "compiler flag") for f in cpu_flags)
        self.jobs = int(jobs)

    def primitives(self):
        url, steps = self.SOURCES[self.framework]
        flags = " ".join(self.cpu_flags)
        src = "/opt/modak/src/%s" % self.framework
        cmds = ["export CFLAGS=%s CXXFLAGS=%s MODAK_JOBS=%d" % (shell.quote(flags), shell.quote(flags), self.jobs),
                "git clone --depth 1 --recursive --branch %s %s %s"
                % (frameworks.get(self.framework).source.tag.format(version=self.version), url, src),
                "cd %s" % src]
        cmds.extend(steps)
        cmds.extend(["cd /", "rm -rf %s" % src])
        return [Comment("%s %s built from source with %s" % (self.framework, self.version, flags)), Shell(tuple(cmds))]

    def as_dict(self):
        return {"block": self.title, "framework": self.framework, "version": self.version,
                "cpu_flags": list(self.cpu_flags)}


class MathLibs(Block):
    """Math libraries: MKL (pip wheels on x86_64) and oneDNN switched on for the framework.

    # Parameters

    framework: the framework (TensorFlow needs ``TF_ENABLE_ONEDNN_OPTS=1``).

    install_mkl: install MKL's pip wheel; false when the framework links MKL statically (PyTorch's
    x86_64 wheels). Default true.

    instructions: MKL's ``MKL_ENABLE_INSTRUCTIONS`` (``AVX512``, ``AVX2``) for the target; none by default.

    libraries: ``mkl``, ``onednn`` (and for GPUs ``cudnn``/``miopen``, which come with the base).

    # Examples

    ```python
    MathLibs(["mkl", "onednn"], framework="tensorflow")
    ```
    """

    title = "math libraries"

    def __init__(self, libraries, framework=None, instructions=None, install_mkl=True):
        self.libraries = tuple(sorted(set(libraries)))
        self.framework = framework
        self.install_mkl = bool(install_mkl)
        self.instructions = check(re.compile(r"^[A-Z0-9_]{1,32}\Z"), instructions, "MKL instructions") \
            if instructions else None

    def primitives(self):
        out = []
        if "mkl" in self.libraries and self.install_mkl:
            out.extend([Comment("math libraries: MKL"), Shell(("pip install --no-cache-dir mkl",))])
        env = []
        if "mkl" in self.libraries and self.instructions:
            env.append(("MKL_ENABLE_INSTRUCTIONS", self.instructions))
        if "onednn" in self.libraries:
            env.extend(frameworks.env_for(self.framework, "onednn_math"))
        if env:
            out.append(Env(tuple(env)))
        return out

    def as_dict(self):
        out = {"block": self.title, "libraries": list(self.libraries), "instructions": self.instructions}
        if "mkl" in self.libraries and not self.install_mkl:
            out["install_mkl"] = False
        return out


class TunedRuntime(Block):
    """The CPU runtime of framework images: OpenMP placement, and jemalloc installed beside the system allocator.

    Threads are not fixed in the image: the job script exports ``OMP_NUM_THREADS`` (and overrides these
    defaults) with the settings modak chose for the job. jemalloc is not preloaded unless asked for: on the
    project's AMD EPYC machine a preloaded jemalloc made MNIST-CNN training 1.3x slower than the system allocator
    (docs/performance.md), so it is a choice a job makes (``application.environment``: ``LD_PRELOAD`` and
    ``MALLOC_CONF`` as ``preload_variables`` gives them), never the image's default.

    # Parameters

    arch: ``x86_64`` or ``aarch64`` (the library directory of Debian's ``libjemalloc2``).

    omp: set ``OMP_PROC_BIND=close`` and ``OMP_PLACES=cores``. Default true.

    preload: preload jemalloc in the image's environment. Default false.

    # Examples

    ```python
    TunedRuntime("x86_64")                 # OMP_PROC_BIND=close, OMP_PLACES=cores; libjemalloc2 installed
    TunedRuntime("x86_64", preload=True)   # and LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2, MALLOC_CONF=...
    ```
    """

    title = "tuned runtime"
    TRIPLETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}
    # Intel's PyTorch CPU settings for jemalloc without background_thread:true: a preloaded allocator thread
    # makes any process that reads the image's environment on the host multithreaded, and a multithreaded
    # process cannot enter a user namespace (ch-image build's RUN after this ENV failed in ch-run with EINVAL)
    MALLOC_CONF = "oversize_threshold:1,metadata_thp:auto,dirty_decay_ms:9000000000,muzzy_decay_ms:9000000000"
    packages = ("libjemalloc2",)

    def __init__(self, arch, omp=True, preload=False):
        if arch not in self.TRIPLETS:
            raise RecipeError("no tuned runtime is known for the architecture %r" % arch)
        self.arch = arch
        self.omp = bool(omp)
        self.preload = bool(preload)

    @property
    def preload_variables(self):
        """The environment that preloads the image's jemalloc."""
        return (("LD_PRELOAD", "/usr/lib/%s/libjemalloc.so.2" % self.TRIPLETS[self.arch]),
                ("MALLOC_CONF", self.MALLOC_CONF))

    @property
    def variables(self):
        pairs = list(self.preload_variables) if self.preload else []
        if self.omp:
            pairs.extend([("OMP_PROC_BIND", "close"), ("OMP_PLACES", "cores")])
        return tuple(pairs)

    def primitives(self):
        what = "jemalloc preloaded" if self.preload else "jemalloc installed, not preloaded"
        if self.omp:
            what += ", OpenMP placement"
        out = [Comment("tuned runtime: %s" % what)]
        if self.variables:
            out.append(Env(self.variables))
        return out

    def as_dict(self):
        return {"block": self.title, "arch": self.arch, "variables": dict(self.variables),
                "jemalloc_preloaded": self.preload}


class GraphCompiler(Block):
    """Graph-compiler enablement: XLA (TensorFlow, Keras, JAX) or inductor (torch.compile).

    # Parameters

    compilers: ``xla`` and/or ``inductor``.

    # Examples

    ```python
    GraphCompiler(["inductor"])   # a C++ compiler in the image, TORCHINDUCTOR_FREEZING=1
    ```
    """

    title = "graph compilers"
    ENV = {"xla": (("TF_XLA_FLAGS", frameworks.XLA_FLAGS),),
           "inductor": (("TORCHINDUCTOR_FREEZING", "1"),)}
    PACKAGES = {"inductor": ("g++", "python3-dev"), "xla": ()}  # inductor compiles C++ against Python.h

    def __init__(self, compilers):
        unknown = sorted(set(compilers) - set(self.ENV))
        if unknown:
            raise RecipeError("no recipe step is known for the graph compiler(s) %s" % ", ".join(unknown))
        self.compilers = tuple(sorted(set(compilers)))

    @property
    def packages(self):
        return tuple(p for c in self.compilers for p in self.PACKAGES[c])

    def primitives(self):
        pairs = tuple(p for c in self.compilers for p in self.ENV[c])
        return [Comment("graph compilers: %s" % ", ".join(self.compilers)), Env(pairs)] if pairs else []

    def as_dict(self):
        return {"block": self.title, "compilers": list(self.compilers)}


class MpiLibrary(Block):
    """An MPI library: the distribution's package, or the requested release built from its sources.

    # Parameters

    distro: ``debian12`` or ``ubuntu22.04`` (gives the packaged version).

    library: ``openmpi`` or ``mpich``.

    version: the release asked for (``3.1.3``). None, or a prefix of the packaged version (``4.1`` on
    Debian 12), takes the distribution's package; any other release is built from the upstream tarball,
    which needs a full release number (``3.1.3``, not ``3.1``). Default none.

    # Examples

    ```python
    MpiLibrary("openmpi")                    # openmpi-bin libopenmpi-dev, version 4.1.4 on Debian 12
    MpiLibrary("openmpi", version="3.1.3")   # Open MPI 3.1.3 built from download.open-mpi.org
    ```

    The MPI speaks the PMI that ``srun --mpi=`` names for it (``pmi``, the ``modak.mpi_pmi`` label): the
    distributions' Open MPI is built with PMIx and their MPICH speaks PMI-2; a source build of Open MPI is
    configured ``--with-pmix --with-slurm``, one of MPICH keeps its built-in PMI client (the simple PMI of
    hydra, whose wire protocol Slurm's pmi2 plugin serves through ``PMI_FD``; no Slurm library in the image).
    """

    title = "MPI library"
    PACKAGES = {"openmpi": ("libopenmpi-dev", "openmpi-bin"), "mpich": ("libmpich-dev", "mpich")}
    VERSIONS = {("openmpi", "debian12"): "4.1.4", ("mpich", "debian12"): "4.0.2",
                ("openmpi", "ubuntu22.04"): "4.1.2", ("mpich", "ubuntu22.04"): "4.0"}
    # what a source build needs from the distribution
    BUILD_PACKAGES = ("build-essential", "curl", "gfortran", "perl", "python3")
    PREFIX = "/usr/local"

    def __init__(self, library, distro="debian12", version=None):
        if library not in self.PACKAGES:
            raise RecipeError("no recipe step is known for the MPI library %r (openmpi or mpich)" % library)
        self.library = library
        packaged = self.VERSIONS[(library, distro)]
        wanted = check(VERSION, version, "MPI version") if version else None
        self.from_source = bool(wanted) and not (packaged + ".").startswith(wanted + ".")
        if self.from_source and wanted.count(".") != 2:
            raise RecipeError("%s %s is not the distribution's (%s) and a source build needs a full release "
                              "number such as %s.0, not %r" % (library, wanted, packaged, wanted, wanted))
        self.version = wanted if self.from_source else packaged

    @property
    def pmi(self):
        """srun's --mpi= plugin that this MPI speaks."""
        return mpi.LIBRARIES[self.library].pmi

    @property
    def url(self):
        if self.library == "openmpi":
            line = ".".join(self.version.split(".")[:2])
            return "https://download.open-mpi.org/release/open-mpi/v%s/openmpi-%s.tar.bz2" % (line, self.version)
        return "https://www.mpich.org/static/downloads/%s/mpich-%s.tar.gz" % (self.version, self.version)

    @property
    def packages(self):
        return self.BUILD_PACKAGES if self.from_source else self.PACKAGES[self.library]

    def primitives(self):
        if not self.from_source:
            return [Comment("MPI: %s %s from the distribution" % (self.library, self.version))]
        src = "/opt/modak/src/%s-%s" % (self.library, self.version)
        configure = "./configure --prefix=%s" % self.PREFIX
        if self.library == "openmpi":
            configure += " --with-pmix --with-slurm"   # its own PMIx client: direct launch with srun --mpi=pmix
        if self.library == "mpich":
            # old MPICH releases fail with GCC >= 10's stricter Fortran argument checks
            configure = "FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch " + configure
        return [Comment("MPI: %s %s built from its release tarball" % (self.library, self.version)), Shell((
            "mkdir -p %s" % src,
            "curl -fsSL -o %s.tar %s" % (src, self.url),
            "tar -xf %s.tar -C %s --strip-components=1" % (src, src),
            "cd %s" % src,
            configure,
            "make -j\"$(nproc)\"",
            "make install",
            "ldconfig",
            "cd /",
            "rm -rf %s %s.tar" % (src, src),
        ))]

    def as_dict(self):
        out = {"block": self.title, "library": self.library, "version": self.version, "pmi": self.pmi}
        if self.from_source:
            out["from_source"] = self.url
        return out


class Environment(Block):
    """Environment variables of the image (names checked, values quoted by the writers).

    # Parameters

    variables: pairs (name, value).

    # Examples

    ```python
    Environment([("OMP_PROC_BIND", "spread")])
    ```
    """

    title = "environment"

    def __init__(self, variables):
        self.variables = tuple((check(ENV_NAME, k, "variable name"), check(ONE_LINE, v, "variable value"))
                               for k, v in variables)

    def primitives(self):
        return [Env(self.variables)] if self.variables else []

    def as_dict(self):
        return {"block": self.title, "variables": dict(self.variables)}


class Labels(Block):
    """Labels describing every optimisation, named like the catalog's attributes (``modak.<attribute>``).

    # Parameters

    attributes: catalog attributes (framework, version, build, arch, isa, cpu_features, accelerator,
    cuda, rocm, compilers, math, mpi, mpi_version, mpi_pmi, kind, name); lists become comma-separated text.

    # Examples

    ```python
    Labels({"framework": "pytorch", "version": "2.5", "compilers": ["inductor"]})
    # modak.compilers=inductor, modak.framework=pytorch, modak.version=2.5
    ```
    """

    title = "labels"
    PREFIX = labels.PREFIX

    def __init__(self, attributes):
        pairs = []
        for key in sorted(attributes):
            value = attributes[key]
            if value is None or value == [] or value == ():
                continue
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            name = check(LABEL_KEY, self.PREFIX + key, "label")
            pairs.append((name, check(re.compile(r"^[A-Za-z0-9_.,:/@+-]{1,256}\Z"), value, "label value")))
        self.pairs = tuple(pairs)

    def primitives(self):
        return [Label(self.pairs)]

    def as_dict(self):
        return {"block": self.title, "labels": dict(self.pairs)}


class RunscriptBlock(Block):
    """What the image runs: the given command, or ``default_argv`` when none is given.

    # Parameters

    default_argv: the command run without arguments (``python3`` for frameworks, ``/bin/sh`` otherwise).

    # Examples

    ```python
    RunscriptBlock(["python3"])
    ```
    """

    title = "runscript"

    def __init__(self, default_argv):
        self.default_argv = tuple(check(re.compile(r"^[A-Za-z0-9_./-]{1,256}\Z"), a, "runscript word")
                                  for a in default_argv)

    def primitives(self):
        return [Runscript(self.default_argv)]

    def as_dict(self):
        return {"block": self.title, "default_argv": list(self.default_argv)}


class TestSection(Block):
    """Checks run at the end of the build (Singularity ``%test``, a final ``RUN`` in a Dockerfile).

    # Parameters

    commands: shell commands made from checked values.

    # Examples

    ```python
    TestSection(["python3 -c 'import torch; print(torch.__version__)'"])
    ```
    """

    title = "test"

    def __init__(self, commands):
        self.commands = tuple(check(ONE_LINE, c, "test command") for c in commands)

    def primitives(self):
        return [Test(self.commands)] if self.commands else []

    def as_dict(self):
        return {"block": self.title, "commands": list(self.commands)}
