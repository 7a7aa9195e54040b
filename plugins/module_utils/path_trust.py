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


def link_may_be_followed(directory, link):
    """True when a link in ``directory`` (its stat) cannot be another user's: only its owner (this user or root)
    changes the directory, or the directory is sticky and the link (``link()``: its lstat, asked only then) is this
    user's or root's, so nobody else can replace it (files applies it to the links it meets, others_may_swap to a
    path given by hand)."""
    if directory.st_uid not in (0, os.geteuid()):
        return False
    if not directory.st_mode & 0o022:
        return True
    return bool(directory.st_mode & stat.S_ISVTX) and link().st_uid in (0, os.geteuid())


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
    trusted group aside), and its path, resolved as the kernel resolves it (``_path_swapper``), must hold no
    directory and no link that someone else could change, so that nobody else can rename or repoint what the path
    names."""
    given = os.path.abspath(path)
    try:
        info = os.stat(given)
    except OSError as exc:
        return "%s cannot be read (%s)" % (given, exc.strerror)
    if info.st_uid not in (0, os.geteuid()):
        return "%s belongs to another user (uid %d)" % (given, info.st_uid)
    if info.st_mode & stat.S_IWOTH or (info.st_mode & stat.S_IWGRP and info.st_gid not in trusted_gids()):
        return "%s may be written by others (mode %04o)" % (given, stat.S_IMODE(info.st_mode))
    try:
        return _path_swapper(given)
    except OSError as exc:
        return "%s cannot be read (%s)" % (given, exc.strerror)


def others_may_rename_in(directory):
    """Why someone else than this user and root could rename or replace what the directory ``directory`` holds (a
    job's working directory, where the job makes files and reopens them by name), or a directory of its path, or
    None: it and every directory above it must pass ``others_may_change``."""
    given = os.path.abspath(directory)
    try:
        why = others_may_change(os.stat(given))
        return "%s: %s" % (given, why) if why else _path_swapper(given)
    except OSError as exc:
        return "%s cannot be read (%s)" % (given, exc.strerror)


def _path_swapper(given):
    """Why someone else could swap what the absolute path ``given`` names, or None. Its names are resolved one at a
    time from ``/``, each link's target in its place: every directory a name is looked up in must pass
    ``others_may_change``, and every link followed must be one that nobody else can replace (files'
    ``link_may_be_followed``; in a directory without the sticky bit that passes, only the user, root and a trusted
    group may replace it). A link of another user's in a sticky directory is refused: its owner may repoint it
    after this check, before the path is read."""
    parts = [part for part in given.split("/") if part]
    directory, links = "/", 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            directory = os.path.dirname(directory)      # reached through no link: its parent is its name's
            continue
        info = os.stat(directory)
        why = others_may_change(info)
        if why:
            return "its directory %s: %s" % (directory, why)
        here = os.path.join(directory, part)
        link = os.lstat(here)
        if not stat.S_ISLNK(link.st_mode):
            directory = here
            continue
        if info.st_mode & stat.S_ISVTX and not link_may_be_followed(info, lambda: link):
            return "%s is a link of another user (uid %d) in the shared sticky directory %s, who may repoint it" % (
                here, link.st_uid, directory)
        links += 1
        if links > 40:                                  # the kernel's own limit (ELOOP)
            return "%s: too many links on the way" % given
        target = os.readlink(here)
        parts[:0] = [part for part in target.split("/") if part]
        if target.startswith("/"):
            directory = "/"
    return None
