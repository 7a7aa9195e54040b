"""Registry discovery against the real local registry: empty registry, unlabelled images, unreachable registry."""

from __future__ import annotations

import socket

from ansible_collections.sodalite.modak.plugins.module_utils import oci_catalog


def test_unreachable_registry_warns_and_gives_the_fallback():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    images, warnings = oci_catalog.load("http://127.0.0.1:%d" % port, fallback=["embedded"], timeout=2)
    assert images == ["embedded"]
    assert len(warnings) == 1 and "was not read" in warnings[0] and "using the embedded catalog" in warnings[0]


def test_bad_url_warns():
    images, warnings = oci_catalog.load("ftp://x; rm", fallback=[])
    assert images == [] and "must be http(s)" in warnings[0]


def test_tls_is_verified_by_default(registry):
    # the local registry speaks plain HTTP: asking for https fails with a warning, never silently
    images, warnings = oci_catalog.load(registry["url"].replace("http://", "https://"), fallback=[], timeout=3)
    assert images == [] and warnings and "was not read" in warnings[0]


def test_entry_from_labels_uses_the_catalog_attribute_names():
    entry = oci_catalog.entry_from_labels({
        "modak.framework": "openmpi", "modak.version": "4.1.4", "modak.kind": "mpi", "modak.mpi": "openmpi",
        "modak.mpi_version": "4.1.4", "modak.math": "openblas", "modak.cpu_features": "avx2,fma",
        "modak.recipe.sha256": "b" * 64}, "docker://r:5000/m/x:1", "m-x-1")
    assert entry == {"uri": "docker://r:5000/m/x:1", "name": "m-x-1", "framework": "openmpi", "version": "4.1.4",
                     "kind": "mpi", "math": ["openblas"], "cpu_features": ["avx2", "fma"],
                     "mpi": {"library": "openmpi", "version": "4.1.4"},
                     "labels": {"modak.recipe.sha256": "b" * 64}}
    assert oci_catalog.entry_from_labels({"maintainer": "x"}, "docker://r/x:1", "x") is None
