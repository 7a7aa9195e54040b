# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local names of pulled images: a readable tail plus a digest of the whole reference.

Two references never share a file: ``docker://a.example/x/pytorch:2.5`` and ``docker://pytorch/pytorch:2.5``
have the same tail (``pytorch_2.5``) but different digests, so one DSL can never replace the image that
jobs of another DSL run.

The name is predictable: in an image directory others may write to, anybody could put a file under it, so a
cached image runs only when it passes the trust check of ``trust.py``.
"""

from __future__ import annotations

import hashlib
import re

DIGEST_CHARS = 16   # 64 bits of sha256: collisions need ~4e9 distinct references in one directory
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def tail(uri):
    """The readable part: the last path component with ':' and '@' as '_' (``openmpi_3.1.3``)."""
    last = uri.split("://", 1)[-1].rstrip("/").split("/")[-1]
    name = _UNSAFE.sub("_", last.replace(":", "_").replace("@", "_"))
    for suffix in (".sif", ".sqfs"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    return name.strip(".")[:80] or "image"


def digest(uri):
    """The first DIGEST_CHARS hex digits of the sha256 of the whole reference, as written."""
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def cache_name(uri, suffix=""):
    """``docker://ethcscs/openmpi:3.1.3`` -> ``openmpi_3.1.3-<digest>`` + suffix (``.sif`` for SIF files)."""
    return "%s-%s%s" % (tail(uri), digest(uri), suffix)
