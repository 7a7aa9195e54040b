# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The image catalog: optimised images with structured attributes.

The default is ``catalog/images.yaml`` of the collection (``embedded()`` reads it on the controller); any
file of the same form can replace it. Entries are checked against
``ENTRY_SCHEMA`` and turned into ``Image``.
"""

from __future__ import annotations

import os

from ansible_collections.sodalite.modak.plugins.module_utils import image_refs, recipe_images, schema, strict_load, versions
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, DslInvalid, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.model import BUILD_RANK, Image  # noqa: F401 pylint: disable=unused-import

try:
    import jsonschema
except ImportError:  # pragma: no cover - reported by the module
    jsonschema = None

BUILDS = ("official", "optimised-pip", "optimised-source")
KINDS = ("framework", "mpi", "application")

_VERSION = {"type": ["string", "number"], "pattern": r"^\d+(\.\d+){0,3}$"}
_RUNTIME_VERSION = {"type": "string", "pattern": r"^\d+(\.\d+){0,2}$"}
_COMPILERS = ["xla", "inductor", "glow", "ngraph", "tvm"]
# pinned Python packages an image carries beside its framework (the DSL's opt_build.python_packages)
_PYTHON_PACKAGES = {"type": "array", "items": {"type": "string", "pattern": schema.PYTHON_PACKAGE}}
# what a recipe-backed image is built from (model.RecipeSpec): a framework at a version, or an MPI library,
# for a CPU (type, ISA level, microarchitecture) and an accelerator
RECIPE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "framework": {"enum": list(schema.FRAMEWORKS)},
        "version": _VERSION,
        "cpu_type": {"enum": list(schema.CPU_TYPES)},
        "cpu_isa": {"enum": list(schema.ISA_LEVELS)},
        "cpu_microarch": {"enum": list(schema.MICROARCHS)},
        "cpu_features": {"type": "array", "items": {"type": "string", "pattern": r"^[a-z0-9_.]+$"}},
        "accelerator": {"enum": ["none", "nvidia", "amd"]},
        "cuda_version": _RUNTIME_VERSION,
        "rocm_version": _RUNTIME_VERSION,
        "compilers": {"type": "array", "items": {"enum": _COMPILERS}},
        "parallelisation": {"enum": [p for p in schema.PARALLELISATIONS if p != "opencc"]},
        "mpi_library": {"enum": list(schema.MPI_LIBRARIES)},
        "omp_affinity": {"enum": ["close", "spread", "master", "primary", "true", "false"]},
        "enable_opt_build": {"type": "boolean"},
        "app": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"},
        "python_packages": _PYTHON_PACKAGES,
    },
}

ENTRY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    # a published image names its reference and attributes; a recipe-backed one its recipe (what it is built
    # from), its attributes then come from the recipe
    "if": {"required": ["recipe"]},
    "then": {},
    "else": {"required": ["uri", "framework", "version"]},
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$"},
        "uri": {"type": "string", "pattern": image_refs.REFERENCE},
        "kind": {"enum": list(KINDS)},
        "framework": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9_.-]*$"},
        "version": {"type": ["string", "number"], "pattern": r"^\d+(\.\d+){0,3}$"},
        "build": {"enum": list(BUILDS)},
        "arch": {"enum": ["x86_64", "aarch64", "ppc64le"]},
        "isa": {"enum": list(schema.ISA_LEVELS)},
        "cpu_features": {"type": "array", "items": {"type": "string", "pattern": r"^[a-z0-9_.]+$"}},
        "accelerator": {"enum": ["none", "nvidia", "amd"]},
        "cuda": {"type": "string", "pattern": r"^\d+(\.\d+){0,2}$"},
        "rocm": {"type": "string", "pattern": r"^\d+(\.\d+){0,2}$"},
        "compilers": {"type": "array", "items": {"enum": _COMPILERS}},
        "math": {"type": "array", "items": {"enum": ["mkl", "onednn", "openblas", "cudnn", "nccl", "miopen"]}},
        "mpi": {"type": "object", "additionalProperties": False, "required": ["library"],
                "properties": {"library": {"enum": list(schema.MPI_LIBRARIES)},
                               "version": {"type": "string", "pattern": r"^\d+(\.\d+){0,3}$"},
                               "pmi": {"enum": [p for p in schema.MPI_TYPES if p != "none"]}}},
        "app": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"},
        "scaling": {"type": "object"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "legacy_code": {"type": "string"},
        "python_packages": _PYTHON_PACKAGES,
        "description": {"type": "string"},
        "recipe": RECIPE_SCHEMA,
    },
}
CATALOG_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["images"],
    "properties": {"version": {"type": "integer"}, "images": {"type": "array", "items": ENTRY_SCHEMA}},
}


def image_from_entry(entry, recipe=None):
    """The Image of a checked catalog entry."""
    mpi = entry.get("mpi") or {}
    return Image(
        name=entry["name"],
        uri=entry["uri"],
        framework=entry["framework"],
        version=versions.parse(str(entry["version"])),
        kind=entry.get("kind", "framework"),
        build=entry.get("build", "official"),
        arch=entry.get("arch", "x86_64"),
        isa=entry.get("isa", "x86-64" if entry.get("arch", "x86_64") == "x86_64" else
                      {"aarch64": "armv8.0-a", "ppc64le": "power9"}[entry["arch"]]),
        cpu_features=tuple(entry.get("cpu_features") or ()),
        accelerator=entry.get("accelerator", "none"),
        cuda=entry.get("cuda"),
        rocm=entry.get("rocm"),
        compilers=tuple(entry.get("compilers") or ()),
        math=tuple(entry.get("math") or ()),
        mpi=mpi.get("library"),
        mpi_version=mpi.get("version"),
        mpi_pmi=mpi.get("pmi"),
        app=entry.get("app"),
        scaling=tuple(sorted((entry.get("scaling") or {}).items())),
        labels=tuple(sorted((entry.get("labels") or {}).items())),
        recipe=recipe,
        python_packages=tuple(sorted(entry.get("python_packages") or (recipe.python_packages if recipe else ()))),
    )


def app_key(tag):
    """Application tags compare without case and with '-' and '_' alike (the original's rows say code-aster,
    its tests code_aster)."""
    return tag.lower().replace("_", "-") if tag else tag


class ImageCatalog(object):
    """An ordered, validated set of images."""

    def __init__(self, images, source="<memory>", build_prefix=recipe_images.DEFAULT_PREFIX, base_image=None):
        self.images = tuple(images)
        self.source = source
        # where the image of a recipe made for a request is pushed, and the base of its CPU recipes
        self.build_prefix = build_prefix
        self.base_image = base_image
        self._index = None
        self._memo = {}

    def memo(self, key, build):
        """``build()``, computed once per catalog for ``key`` (indexes the matcher derives)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def of_kind(self, kind, key):
        """The images of ``kind`` whose framework (framework), MPI library (mpi) or application (application)
        is ``key``, in catalog order; an index built on first use makes this O(1)."""
        if self._index is None:
            index = {}
            for image in self.images:
                value = {"framework": image.framework, "mpi": image.mpi, "application": app_key(image.app)}.get(image.kind)
                index.setdefault((image.kind, value), []).append(image)
            self._index = dict((k, tuple(v)) for k, v in index.items())
        return self._index.get((kind, app_key(key) if kind == "application" else key), ())

    def __len__(self):
        return len(self.images)

    def __iter__(self):
        return iter(self.images)

    @classmethod
    def from_data(cls, data, source="<memory>", build_prefix=recipe_images.DEFAULT_PREFIX, base_image=None):
        """Recipe-backed entries get the recipe's attributes and the uri under ``build_prefix`` their build
        pushes to; ``base_image`` replaces the base of their CPU recipes."""
        if isinstance(data, list):
            data = {"images": data}
        if jsonschema is None:
            raise CatalogError("the jsonschema library is needed to read a catalog")
        errors = sorted(jsonschema.Draft202012Validator(CATALOG_SCHEMA).iter_errors(data),
                        key=lambda e: [str(p) for p in e.absolute_path])
        if errors:
            shown = ["%s: %s" % (path_str(list(e.absolute_path)) or "(catalog)", e.message[:200]) for e in errors[:10]]
            raise CatalogError("catalog %s is malformed:\n  - %s" % (source, "\n  - ".join(shown)))
        names = set()
        images = []
        for entry in data["images"]:
            if entry["name"] in names:
                raise CatalogError("catalog %s: image name %r appears twice" % (source, entry["name"]))
            names.add(entry["name"])
            if "recipe" in entry:
                resolved, spec = recipe_images.resolve(entry, build_prefix, base_image, source)
                images.append(image_from_entry(resolved, spec))
            else:
                images.append(image_from_entry(entry))
        return cls(images, source, build_prefix, base_image)

    def recipe_image(self, spec, source="the request"):
        """The recipe-backed Image that RecipeSpec ``spec`` builds, pushed under this catalog's build prefix (its
        recipes' base image too): an image made for a request rather than listed. CatalogError when no recipe can
        be made."""
        prefix = self.build_prefix or recipe_images.DEFAULT_PREFIX
        entry, spec = recipe_images.resolve({"recipe": spec.as_dict()}, prefix, self.base_image, source)
        return image_from_entry(entry, spec)

    @classmethod
    def from_file(cls, path, **build):
        """The catalog of file ``path``; read again only when the file changed (a process that optimises many
        documents, such as ansible-playbook's, whose workers inherit what its parent read, reads it once)."""
        try:
            info = os.stat(path)
        except OSError as exc:
            raise CatalogError("cannot read catalog %s: %s" % (path, exc.strerror or exc))
        key = (os.path.abspath(path), info.st_mtime_ns, info.st_size, info.st_ino, tuple(sorted(build.items())))
        if key not in _FILES:
            if len(_FILES) >= 8:
                _FILES.clear()
            _FILES[key] = cls.from_data(read_data(path), str(path), **build)
        return _FILES[key]


_FILES = {}


def data_of(text, source="<memory>"):
    """The plain data of a catalog's YAML or JSON text, read as strictly as a DSL document (no aliases, no key
    given twice) within the catalog's limits (strict_load.CATALOG)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        return strict_load.loads(text, "auto", strict_load.CATALOG)
    except DslInvalid as exc:
        raise CatalogError("catalog %s is refused: %s" % (source, _problems(exc)))


def read_data(path):
    """The plain data of the catalog file ``path`` (size-capped, a regular file, read as strictly as a DSL)."""
    try:
        text = strict_load.read_file(path, strict_load.CATALOG)
    except (IOError, OSError) as exc:
        raise CatalogError("cannot read catalog %s: %s" % (path, exc.strerror or exc))
    except DslInvalid as exc:
        raise CatalogError("catalog %s is refused: %s" % (path, _problems(exc)))
    return data_of(text, str(path))


def collection_catalog_path():
    """Path of the collection's own catalog, catalog/images.yaml (on the controller, or in a checkout)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "catalog", "images.yaml")


def _problems(exc):
    return "; ".join(("%s %s" % (p.path, p.message)).strip() for p in exc.problems[:10])


def embedded(build_prefix=recipe_images.DEFAULT_PREFIX, base_image=None):
    """The collection's own catalog, catalog/images.yaml, read where the collection is installed (the
    controller): its recipe-backed entries pushed under ``build_prefix``, ``base_image`` the base of their CPU
    recipes."""
    path = collection_catalog_path()
    if not os.path.isfile(path):
        raise CatalogError("the collection's catalog %s is missing: give a catalog (the optimise action plugin "
                           "reads it on the controller and passes it as catalog_data)" % os.path.normpath(path))
    return ImageCatalog.from_file(path, build_prefix=build_prefix, base_image=base_image)
