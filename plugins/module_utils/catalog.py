# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The image catalog: optimised images with structured attributes.

The embedded default is ``catalog/images.yaml`` of the collection (``embedded()`` reads its generated copy,
embedded_catalog.py); any file of the same form can replace it. Entries are checked against
``ENTRY_SCHEMA`` and turned into ``Image``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.sodalite.modak.plugins.module_utils import recipe_images, schema, versions
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.model import Image

try:
    import jsonschema
except ImportError:  # pragma: no cover - reported by the module
    jsonschema = None

try:
    import yaml
except ImportError:  # pragma: no cover - reported by the module
    yaml = None

BUILDS = ("official", "optimised-pip", "optimised-source")
BUILD_RANK = {"official": 0, "optimised-pip": 1, "optimised-source": 2}
KINDS = ("framework", "mpi", "application")

ENTRY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    # a published image names its reference and attributes; a recipe-backed one its recipe (the DSL
    # optimisation section it is built from), its attributes then come from the recipe
    "if": {"required": ["recipe"]},
    "then": {"properties": {"recipe": {"type": "object", "required": ["app_type"]}}},
    "else": {"required": ["uri", "framework", "version"]},
    "properties": {
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$"},
        "uri": {"type": "string", "pattern": schema.IMAGE_REF},
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
        "compilers": {"type": "array", "items": {"enum": ["xla", "inductor", "glow", "ngraph", "tvm"]}},
        "math": {"type": "array", "items": {"enum": ["mkl", "onednn", "openblas", "cudnn", "nccl", "miopen"]}},
        "mpi": {"type": "object", "additionalProperties": False, "required": ["library"],
                "properties": {"library": {"enum": list(schema.MPI_LIBRARIES)},
                               "version": {"type": "string", "pattern": r"^\d+(\.\d+){0,3}$"}}},
        "app": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$"},
        "scaling": {"type": "object"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "legacy_code": {"type": "string"},
        "description": {"type": "string"},
        "recipe": {"type": "object"},
    },
}
CATALOG_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["images"],
    "properties": {"version": {"type": "integer"}, "images": {"type": "array", "items": ENTRY_SCHEMA}},
}


def image_from_entry(entry, recipe=None):
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
        app=entry.get("app"),
        scaling=tuple(sorted((entry.get("scaling") or {}).items())),
        labels=tuple(sorted((entry.get("labels") or {}).items())),
        recipe=json.dumps(recipe, sort_keys=True) if recipe is not None else None,
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
                resolved = recipe_images.resolve(entry, build_prefix, base_image, source)
                images.append(image_from_entry(resolved, entry["recipe"]))
            else:
                images.append(image_from_entry(entry))
        return cls(images, source, build_prefix, base_image)

    @classmethod
    def from_text(cls, text, source="<memory>", **build):
        if yaml is None:
            raise CatalogError("PyYAML is needed to read a catalog")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CatalogError("catalog %s is not valid YAML: %s" % (source, re.sub(r"\s+", " ", str(exc))))
        return cls.from_data(data, source, **build)

    @classmethod
    def from_file(cls, path, **build):
        try:
            with open(path, "rb") as handle:
                text = handle.read()
        except (IOError, OSError) as exc:
            raise CatalogError("cannot read catalog %s: %s" % (path, exc.strerror or exc))
        return cls.from_text(text, str(path), **build)


def embedded(build_prefix=recipe_images.DEFAULT_PREFIX, base_image=None):
    """The collection's own catalog: catalog/images.yaml as embedded_catalog.py holds it, checked and with its
    recipes resolved when that file was generated; only the build prefix is applied here. A ``base_image``
    changes the recipes, which are then resolved again."""
    from ansible_collections.sodalite.modak.plugins.module_utils import embedded_catalog  # pylint: disable=import-outside-toplevel
    if base_image:
        return ImageCatalog.from_data({"images": embedded_catalog.ENTRIES}, embedded_catalog.SOURCE, build_prefix,
                                      base_image)
    recipe_images.check_prefix(build_prefix)
    images = []
    for raw, built in zip(embedded_catalog.ENTRIES, embedded_catalog.RESOLVED):
        if built is None:
            images.append(image_from_entry(raw))
            continue
        entry = dict(built["entry"])
        if "uri" not in raw:
            entry["uri"] = recipe_images.build_uri(build_prefix, _RecipeName(built["name"], built["sha256"]))
        images.append(image_from_entry(entry, raw["recipe"]))
    return ImageCatalog(images, embedded_catalog.SOURCE, build_prefix)


class _RecipeName(object):
    """The name and hash of a resolved recipe: what build_uri reads."""

    def __init__(self, name, sha256):
        self.name, self.sha256 = name, sha256
