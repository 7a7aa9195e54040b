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
import struct


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


ACL_XATTR = "system.posix_acl_access"
ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK = 0x02, 0x04, 0x08, 0x10     # acl(5) entry tags, as the kernel stores them


def acl_writers(path):
    """(uids, gids) that the POSIX ACL of ``path`` lets write it through its named entries, each with the mask
    applied (its effective right, acl(5)), and whether the owning group may write; None without an extended ACL.
    With named entries the mode's group bits show the mask, not the owning group's right."""
    try:      # ``path`` may be an open descriptor; a path is followed, as os.stat follows it for the mode
        blob = os.getxattr(path, ACL_XATTR)
    except OSError:
        return None
    entries = [struct.unpack_from("<HHI", blob, offset) for offset in range(4, len(blob) - 7, 8)]
    mask = next((perm for tag, perm, _id in entries if tag == ACL_MASK), 7)
    writes = [(tag, ident) for tag, perm, ident in entries if perm & mask & 2]
    return (set(ident for tag, ident in writes if tag == ACL_USER),
            set(ident for tag, ident in writes if tag == ACL_GROUP),
            any(tag == ACL_GROUP_OBJ for tag, _ident in writes))


def others_may_change(info, path=None):
    """Why someone else than this user and root may rename or replace what the directory ``info`` (an os.stat
    result of ``path``) holds, or None: the trust model of docs/containers.md, as sshd's StrictModes checks
    ``~/.ssh``. Its owner must be the user or root, and others may write it only with the sticky bit (they cannot
    rename what is not theirs) or as a trusted group. A POSIX ACL (read from ``path``) is judged by each entry's
    effective right: a named user or an untrusted named group that may write it is someone else."""
    mode = info.st_mode
    if info.st_uid not in (0, os.geteuid()):
        return "it belongs to another user (uid %d)" % info.st_uid
    if mode & stat.S_ISVTX:
        return None
    if mode & stat.S_IWOTH:
        return "every user may write it (and it has no sticky bit)"
    return _writers(info, path)


def _writers(info, path):
    """Why a group or, through a POSIX ACL of ``path`` (None: not read), another user or group than this user,
    root and the trusted groups may write what ``info`` describes, or None (others' bits are the caller's)."""
    acl = acl_writers(path) if path is not None else None
    group_writes = acl[2] if acl else bool(info.st_mode & stat.S_IWGRP)
    if group_writes and info.st_gid not in trusted_gids():
        return "its group (gid %d) may write it, and the group is not trusted (MODAK_TRUSTED_GROUPS)" % info.st_gid
    users = sorted(acl[0] - set([0, os.geteuid()])) if acl else []
    groups = sorted(acl[1] - trusted_gids()) if acl else []
    if users:
        return "its ACL lets another user (uid %d) write it" % users[0]
    if groups:
        return "its ACL lets a group that is not trusted (gid %d) write it" % groups[0]
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
    why = "every user may write it" if info.st_mode & stat.S_IWOTH else _writers(info, given)
    if why:
        return "%s may be written by others (mode %04o: %s)" % (given, stat.S_IMODE(info.st_mode), why)
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
        why = others_may_change(os.stat(given), given)
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
        why = others_may_change(info, directory)
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
