# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whom a directory or a file on the host trusts: the trust model of docs/containers.md, as sshd's StrictModes
checks ``~/.ssh``, for what modak uses by its path after writing or checking it (a job script the scheduler reads
when it is submitted, batch_job's state directory, a job directory). The job's own check of its images is the
same model as shell lines (runtimes/trust.py).

Nobody but the user and root may change the file, or rename it or a directory of its path: a directory is the
user's or root's and written by others only with the sticky bit (they cannot rename what is not theirs) or by a
trusted group; a trusted group is the user's private group (the primary group named as the user, with no other
member listed and no other account's primary group in the passwd database: User Private Groups) or one that
``MODAK_TRUSTED_GROUPS`` lists (names or gids, separated by spaces)."""

from __future__ import annotations

import grp
import os
import pwd
import stat


def private_gid():
    """The gid of the user's private group (see above), or None. A group lists only its supplementary members: an
    account whose passwd entry names the group as its primary one (``useradd -g <user>``) is in it unlisted."""
    try:
        me = pwd.getpwuid(os.geteuid())
        group = grp.getgrgid(os.getegid())
    except KeyError:
        return None
    if group.gr_name != me.pw_name or not set(group.gr_mem) <= set([me.pw_name]):
        return None
    if any(entry.pw_gid == group.gr_gid and entry.pw_uid != me.pw_uid for entry in pwd.getpwall()):
        return None
    return group.gr_gid


def trusted_gids():
    """The gids of the trusted groups (see above), as runtimes/trust.py trusts them for images."""
    found = set([private_gid()]) - set([None])
    for word in os.environ.get("MODAK_TRUSTED_GROUPS", "").split():
        try:
            found.add(grp.getgrgid(int(word)).gr_gid if word.isdigit() else grp.getgrnam(word).gr_gid)
        except (KeyError, ValueError, OverflowError):
            pass
    return found


def others_may_change(info):
    """Why someone else than this user and root may rename or replace what the directory ``info`` (an os.stat
    result) holds, or None: the trust model of docs/containers.md, as sshd's StrictModes checks ``~/.ssh``. Its
    owner must be the user or root, and others may write it only with the sticky bit (they cannot rename what is
    not theirs) or as a trusted group."""
    mode = info.st_mode
    if info.st_uid not in (0, os.geteuid()):
        return "it belongs to another user (uid %d)" % info.st_uid
    if mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH:
        return "every user may write it (and it has no sticky bit)"
    if mode & stat.S_IWGRP and info.st_gid not in trusted_gids():
        return "its group (gid %d) may write it, and the group is not trusted (MODAK_TRUSTED_GROUPS)" % info.st_gid
    return None


def others_may_swap(path):
    """Why someone else than this user and root could change the file ``path`` before it is used by its path (a job
    script submitted by its name), or None: the file must be the user's (or root's) and written by nobody else (a
    trusted group aside), and every directory from ``/`` down to it, on the path as given and as the links resolve,
    must pass ``others_may_change``, so that nobody else can rename the file or a directory of its path."""
    given = os.path.abspath(path)
    try:
        info = os.stat(given)
    except OSError as exc:
        return "%s cannot be read (%s)" % (given, exc.strerror)
    if info.st_uid not in (0, os.geteuid()):
        return "%s belongs to another user (uid %d)" % (given, info.st_uid)
    if info.st_mode & stat.S_IWOTH or (info.st_mode & stat.S_IWGRP and info.st_gid not in trusted_gids()):
        return "%s may be written by others (mode %04o)" % (given, stat.S_IMODE(info.st_mode))
    for start in (given, os.path.realpath(given)):
        directory = os.path.dirname(start)
        while True:
            why = others_may_change(os.stat(directory))
            if why:
                return "its directory %s: %s" % (directory, why)
            if directory == "/":
                break
            directory = os.path.dirname(directory)
    return None
