# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One recipe model for every writer: an ordered list of building blocks derived from a JobRequest.

``from_spec(spec_of(request))`` decides what the optimised image holds (base, framework and how it is
installed, math libraries, graph compilers, MPI, environment) and describes each choice with a
``modak.<attribute>`` label named like the catalog's attributes, so a built image can be put in a
catalog (or discovered in a registry) and chosen by the matcher next time.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.sodalite.modak.plugins.module_utils import cpu, frameworks, labels, versions
from ansible_collections.sodalite.modak.plugins.module_utils.model import RecipeSpec
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import blocks
from ansible_collections.sodalite.modak.plugins.module_utils.recipe.blocks import RecipeError

# the version pinned when the DSL asks for "latest" (or gives no version)
DEFAULT_VERSIONS = frameworks.default_versions()
SOURCE_FRAMEWORKS = tuple(frameworks.source_builds())
FRAMEWORK_CUDA = frameworks.cuda_releases()
TORCH_INDEX = "https://download.pytorch.org/whl/"
LABEL_HASH = labels.RECIPE_HASH
# what distribution wheels and packages need of the CPU
PORTABLE_ISA = {"x86_64": "x86-64-v2", "aarch64": "armv8.0-a", "ppc64le": "power9"}


def march_flags(opt, profile):
    """Compiler flags for the target from archspec: ``-march``/``-mtune`` (x86) or ``-mcpu`` (Arm, POWER)."""
    return cpu.compiler_flags(microarch=opt.cpu_microarch, isa=profile.isa)


class Recipe(object):
    """An ordered list of blocks plus the catalog attributes they add up to."""

    def __init__(self, name, blocks_, attributes):
        self.name = name
        self.blocks = list(blocks_)
        self.attributes = dict(attributes)

    @property
    def base_image(self):
        return self.blocks[0].image

    def as_dict(self):
        return {"name": self.name, "blocks": [b.as_dict() for b in self.blocks], "attributes": self.attributes}

    @property
    def sha256(self):
        """Hash of the model (not of one format's text): the same for the definition file and the Dockerfile."""
        text = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def labels(self):
        """Every label of the image, the recipe hash included."""
        out = {}
        for block in self.blocks:
            if isinstance(block, blocks.Labels):
                out.update(block.pairs)
        out[LABEL_HASH] = self.sha256
        return out

    def primitives(self):
        """The blocks' primitives, the recipe hash label appended to the labels."""
        out = []
        for block in self.blocks:
            for prim in block.primitives():
                if isinstance(prim, blocks.Label):
                    prim = blocks.Label(prim.pairs + ((LABEL_HASH, self.sha256),))
                out.append(prim)
        return out

    def catalog_entry(self, uri):
        """The catalog entry (catalog/images.yaml form) of an image built from this recipe, named as its image is:
        the recipe name and the first 12 digits of its hash (two applications' recipes of one name are two
        entries; a catalog keeps one entry per name)."""
        entry = {"name": "%s-%s" % (self.name, self.sha256[:12]), "uri": uri}
        for key in ("framework", "version", "kind", "build", "arch", "isa", "accelerator", "cuda", "rocm", "app"):
            if self.attributes.get(key) is not None:
                entry[key] = self.attributes[key]
        for key in ("cpu_features", "compilers", "math", "python_packages"):
            if self.attributes.get(key):
                entry[key] = list(self.attributes[key])
        if self.attributes.get("mpi"):
            entry["mpi"] = {"library": self.attributes["mpi"]}
            if self.attributes.get("mpi_version"):
                entry["mpi"]["version"] = self.attributes["mpi_version"]
            if self.attributes.get("mpi_pmi"):
                entry["mpi"]["pmi"] = self.attributes["mpi_pmi"]
        entry["labels"] = {LABEL_HASH: self.sha256}
        return entry


def _framework_version(opt):
    try:
        request = versions.VersionRequest(opt.version)
    except ValueError as exc:
        raise RecipeError(str(exc))
    if request.is_any:
        return DEFAULT_VERSIONS.get(opt.framework, "1.0")
    if request.prefix is None:
        raise RecipeError("a recipe pins one version: give %s a version such as 2.5 or 2.5.1, not the range %r"
                          % (opt.framework, opt.version))
    return versions.render(request.prefix)


def _full_version(framework, version):
    """A source build needs a release: '2.5' -> the default release when it is on that line, else '2.5.0'."""
    if version.count(".") >= 2:
        return version
    default = DEFAULT_VERSIONS.get(framework, "")
    if default.startswith(version + "."):
        return default
    return version + ".0"


def default_cuda(opt):
    """The CUDA version for an NVIDIA recipe: the DSL's, else the one the framework release was built with."""
    if opt.cuda_version or not opt.framework:
        return opt.cuda_version
    table = FRAMEWORK_CUDA.get(opt.framework, {})
    line = ".".join(_framework_version(opt).split(".")[:2])
    if line not in table:
        raise RecipeError("no CUDA version is known for %s %s: give opt_build.cuda_version (known lines: %s)"
                          % (opt.framework, line, ", ".join(sorted(table, key=versions.parse)) or "none"))
    return table[line]


def _mpi_version(opt):
    """The MPI release an HPC request pins (parallelisation-mpi.version), or None for the distribution's."""
    if opt.framework or not opt.version:
        return None
    try:
        request = versions.VersionRequest(opt.version)
    except ValueError as exc:
        raise RecipeError(str(exc))
    if request.is_any:
        return None
    if request.prefix is None:
        raise RecipeError("a recipe pins one MPI version: give %s a version such as 4.1 or 3.1.3, not the range %r"
                          % (opt.mpi_library or "the MPI library", opt.version))
    return versions.render(request.prefix)


def _compilers(opt):
    """The graph compilers the image needs: those asked for, and inductor when the tuning may choose torch.compile
    for PyTorch (the tuned choice must run in the image)."""
    compilers = tuple(opt.compilers)
    if opt.framework == "pytorch" and True in dict(opt.tuning).get("compile", ()) and "inductor" not in compilers:
        compilers += ("inductor",)
    return compilers


def spec_of(request):
    """The RecipeSpec of a JobRequest that has an optimisation section."""
    opt = request.opt
    if opt is None:
        raise RecipeError("a recipe needs the DSL's optimisation section (job.optimisation)")
    return RecipeSpec(
        framework=opt.framework, version=opt.version, cpu_type=opt.cpu_type, cpu_isa=opt.cpu_isa,
        cpu_microarch=opt.cpu_microarch, cpu_features=tuple(opt.cpu_features), accelerator=opt.accelerator,
        cuda_version=opt.cuda_version, rocm_version=opt.rocm_version, compilers=_compilers(opt),
        parallelisation=opt.parallelisation, mpi_library=opt.mpi_library, omp_affinity=opt.omp_affinity,
        enable_opt_build=opt.enable_opt_build, app=request.app.app_tag,
        python_packages=tuple(sorted(opt.python_packages)))


def from_spec(opt, base_image=None, wheels=False):
    """Derive the Recipe from a RecipeSpec.

    ``base_image`` replaces the base chosen from the spec; ``wheels``: the framework's wheel comes from the
    build context's ``wheels/`` directory (``blocks.FrameworkPip``).
    """
    profile = cpu.profile(opt.cpu_type, opt.cpu_isa, opt.cpu_microarch, opt.cpu_features)
    accelerator = opt.accelerator if opt.accelerator in ("nvidia", "amd") else "none"
    if opt.accelerator == "fpga":
        raise RecipeError("no recipe is known for FPGA targets")
    cuda = default_cuda(opt) if accelerator == "nvidia" else None
    if accelerator == "nvidia" and not base_image and opt.framework and \
            ".".join(cuda.split(".")[:2]) not in blocks.BaseImage.CUDA_TAGS:
        # an old release: no CUDA base of its line is published, the framework's own GPU image is
        base_image = frameworks.get(opt.framework).gpu_image(_full_version(opt.framework, _framework_version(opt)))
    base = blocks.BaseImage(accelerator, cuda=cuda, rocm=opt.rocm_version if accelerator == "amd" else None,
                            image=base_image)
    packages = ["ca-certificates"]
    attrs = {"arch": profile.arch, "accelerator": accelerator,
             "cuda": base.cuda, "rocm": base.rocm}
    body, env = [], []
    mpi_name = opt.mpi_library or ("openmpi" if opt.parallelisation == "mpi" else None)
    mpi = blocks.MpiLibrary(mpi_name, base.distro, _mpi_version(opt)) if mpi_name else None

    if opt.framework:
        version = _framework_version(opt)
        packages.extend(["python3", "python3-venv", "python3-pip"])
        body.append(blocks.PythonEnv())
        baseline = PORTABLE_ISA.get(profile.arch, "x86-64")
        optimised_cpu = bool(opt.cpu_microarch) or bool(
            opt.cpu_isa and cpu.ISA_RANK.get(opt.cpu_isa, 0) > cpu.ISA_RANK.get(baseline, 0))
        source = (opt.enable_opt_build and accelerator == "none" and optimised_cpu
                  and opt.framework in SOURCE_FRAMEWORKS)
        if source:
            version = _full_version(opt.framework, version)
            flags = march_flags(opt, profile)
            packages.extend(["build-essential", "cmake", "git", "ninja-build"])
            packages.extend(frameworks.get(opt.framework).source.packages)
            body.append(blocks.FrameworkSource(opt.framework, version, flags))
            if opt.python_packages:
                body.append(blocks.PythonPackages(opt.python_packages))
            base_features = cpu.isa_features(profile.isa)
            attrs.update(build="optimised-source", isa=profile.isa,
                         cpu_features=sorted((profile.features - base_features) & cpu.NOTABLE_FEATURES))
        else:
            index = None
            if opt.framework == "pytorch":
                index = TORCH_INDEX + ("cu%s" % "".join(base.cuda.split(".")[:2]) if accelerator == "nvidia" else
                                       "rocm%s" % ".".join(base.rocm.split(".")[:2]) if accelerator == "amd" else
                                       "cpu")
            body.append(blocks.FrameworkPip(opt.framework, version, index_url=index, extra=opt.python_packages,
                                            wheels=wheels))
            attrs.update(build="optimised-pip", isa=baseline, cpu_features=[])
        math = []
        if accelerator == "nvidia":
            math = ["cudnn"]
        elif accelerator == "amd":
            math = ["miopen"]
        elif profile.arch == "x86_64":
            math = ["mkl", "onednn"]
        elif profile.arch == "aarch64":
            math = ["onednn"]
        if math:
            instructions = {"x86-64-v3": "AVX2", "x86-64-v4": "AVX512"}.get(attrs["isa"])
            # PyTorch's x86_64 wheels link MKL statically: no MKL wheel next to them
            body.append(blocks.MathLibs([m for m in math if m in ("mkl", "onednn")], framework=opt.framework,
                                        instructions=instructions,
                                        install_mkl=not (opt.framework == "pytorch" and not source)))
        if opt.framework == "pytorch" and accelerator == "none" and profile.arch in blocks.TunedRuntime.TRIPLETS:
            tuned = blocks.TunedRuntime(profile.arch, omp=not opt.omp_affinity)
            packages.extend(tuned.packages)
            body.append(tuned)
        compilers = [c for c in opt.compilers if c in ("xla", "inductor")]
        for bundled in frameworks.get(opt.framework).bundled:
            if bundled not in compilers:
                compilers.append(bundled)  # it ships with the framework; the label says so
        if compilers:
            gc = blocks.GraphCompiler(compilers)
            packages.extend(gc.packages)
            body.append(gc)
        attrs.update(kind="framework", framework=opt.framework, version=version,
                     compilers=sorted(compilers), math=sorted(math))
        if opt.python_packages:    # in the catalog entry; labels cannot hold '=' (they hash the recipe instead)
            attrs["python_packages"] = sorted(opt.python_packages)
        module = frameworks.get(opt.framework).module
        test = ["python3 -c 'import %s; print(%s.__version__)'" % (module, module)]
        runscript = ["python3"]
        arch_tag = ("cuda%s" % base.cuda if accelerator == "nvidia" else
                    "rocm%s" % base.rocm if accelerator == "amd" else "cpu")
        name = "modak-%s-%s-%s-%s" % (opt.framework, version, arch_tag, opt.cpu_microarch or attrs["isa"])
    else:
        attrs.update(build="optimised-pip", isa=PORTABLE_ISA.get(profile.arch, "x86-64"), cpu_features=[])
        if mpi:
            attrs.update(kind="mpi", framework=mpi.library, version=mpi.version)
        else:
            attrs.update(kind="application", framework="base", version="1",
                         app=opt.app or "generic")
        test = ["test -x /bin/sh"]
        runscript = ["/bin/sh"]
        name = "modak-%s-%s-%s" % (attrs["framework"], attrs["version"], attrs["isa"])
    if mpi:
        packages.extend(mpi.packages)
        body.append(mpi)
        attrs.update(mpi=mpi.library, mpi_version=mpi.version, mpi_pmi=mpi.pmi)
        test.append("command -v mpirun")
    if opt.omp_affinity:
        env.append(("OMP_PROC_BIND", opt.omp_affinity))
        env.append(("OMP_PLACES", "cores"))
    out = [base, blocks.OsPackages(packages, family=base.family)] + body
    if env:
        out.append(blocks.Environment(env))
    attrs["name"] = name
    out.extend([blocks.Labels(dict((k, v) for k, v in attrs.items() if k != "python_packages")),
                blocks.RunscriptBlock(runscript), blocks.TestSection(test)])
    return Recipe(name, out, attrs)
