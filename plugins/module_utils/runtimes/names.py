# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local names of pulled images: a readable tail plus a digest of the whole reference.

Two references never share a file: ``docker://a.example/x/pytorch:2.5`` and ``docker://pytorch/pytorch:2.5``
have the same tail (``pytorch_2.5``) but different digests, so one DSL can never replace the image that
jobs of another DSL run.

A cached image is run only when it is the user's own: in an image directory others may write to, anybody can
put a file under the predictable name, and what it holds would run as the job. ``trust_lines`` refuse a cached
image that is a link, belongs to another user or that others may change (for an image directory: any file in
it), before it is used; an image of someone else is run only when the DSL names its path itself.
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


def trust_lines(variable="IMAGE"):
    """Shell lines that stop the job when ``$variable`` exists but is not the user's own image (see above).

    The image itself (the SIF file or the directory) must be the user's and writable by nobody else. Inside an
    image directory every entry must be the user's, and written by others only where every image lets them:
    sticky directories (its /tmp, /var/tmp) and group-writable system files of the image's own groups (Debian's
    /var/mail, /var/log/wtmp); a world-writable file or directory is refused."""
    var = '"$%s"' % variable
    outside = 'find %s -maxdepth 0 \\( ! -uid "$(id -u)" -o -perm /022 \\) -print' % var
    inside = ('find %s ! -type l \\( ! -uid "$(id -u)" -o \\( -perm /002 ! \\( -type d -perm -1000 \\) \\) \\) '
              '-print -quit' % var)
    return [
        'if [ -L %s ] || { [ -e %s ] && [ -n "$(%s; %s)" ]; }; then' % (var, var, outside, inside),
        '  echo "modak: $%s is not this user'"'"'s own image, or others may change it: not run (remove it, or use an '
        'image directory of your own)" >&2' % variable,
        "  exit 1",
        "fi",
    ]
