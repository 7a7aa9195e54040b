# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Container image references: the one place their patterns are written.

A reference names its transport (``docker://``, ``oras://``, ...) or is a SIF path or a bare name; a name is what
a build tool takes (``registry[:port]/repository[:tag][@digest]``). Every pattern is anchored, bounded and runs
in linear time.
"""

from __future__ import annotations

import re

TRANSPORTS = ("docker", "library", "oras", "shub", "docker-archive", "oci-archive", "docker-daemon")
_NAME = r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,255}"
_REF_TAIL = r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,255}"

# what the DSL's container_runtime and a catalog's uri may say (JSON Schema, ECMA 262): a transport and its
# reference, a .sif path, the original MODAK's bare 'repo/name:tag' or 'name' (read as docker://), or ''
# a .sif path never starts with '-' (apptainer exec would read it as an option)
REFERENCE = (r"^((%s)://%s|[A-Za-z0-9_./+][A-Za-z0-9_./+-]{0,254}\.(sif|sqsh)|%s|)$"
             % ("|".join(TRANSPORTS), _REF_TAIL, _REF_TAIL))
# an image name as build tools take it (a recipe's base image)
NAME = re.compile(r"^%s\Z" % _NAME)
# what a build makes: an image name, or an absolute path (a SIF file)
BUILD_TARGET = re.compile(r"^/?%s\Z" % _NAME)
# where a build pushes: a registry (docker://) or an ORAS artifact (oras://)
PUSH_TARGET = re.compile(r"^(docker|oras)://%s\Z" % _NAME)
# where recipe-backed images are pushed: docker://host[:port]/namespace, or an absolute image directory
BUILD_PREFIX = re.compile(r"^(docker://[A-Za-z0-9.-]+(:\d{1,5})?(/[a-z0-9][a-z0-9._-]*)*|/[A-Za-z0-9._/-]*)\Z")
# docker://host[:port]/repository:tag, split into host, repository and tag (a manifest lookup)
TAGGED = re.compile(r"^docker://([^/]+)/([^:]+):([A-Za-z0-9_.-]+)\Z")
