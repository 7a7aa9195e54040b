"""The user's private group of the trust model (docs/containers.md) on the host: path_trust's Python form (the
job's shell form is run in test_image_trust.py). The user and group databases are stand-ins: the user alice, whose
group alice lists no member, and the account eve, whose passwd entry names alice's group as its primary one."""

from __future__ import annotations

import grp
import os
import pwd

from ansible_collections.sodalite.modak.plugins.module_utils import path_trust


def test_a_private_group_that_is_another_accounts_primary_group_is_not_trusted(monkeypatch):
    """A group named as the user with no member listed was taken as the user's private group; an account whose
    passwd entry names it as its primary group (`useradd -g alice eve`) is in it unlisted, and could rename a file
    in a directory that group may write (a job script's, batch_job's state). Now such a group is trusted only when
    no other account has it as its primary group."""
    uid, gid = os.geteuid(), os.getegid()
    alice = pwd.struct_passwd(("alice", "x", uid, gid, "", "/home/alice", "/bin/sh"))
    eve = pwd.struct_passwd(("eve", "x", uid + 4242, gid, "", "/home/eve", "/bin/sh"))
    same_uid = pwd.struct_passwd(("alice2", "x", uid, gid, "", "/home/alice", "/bin/sh"))   # alice by another name
    monkeypatch.setattr(pwd, "getpwuid", lambda _uid: alice)
    monkeypatch.setattr(grp, "getgrgid", lambda _gid: grp.struct_group(("alice", "x", gid, [])))
    monkeypatch.delenv("MODAK_TRUSTED_GROUPS", raising=False)
    project = os.stat_result((0o40770, 0, 0, 2, uid, gid, 4096, 0, 0, 0))        # drwxrwx--- alice:alice
    monkeypatch.setattr(pwd, "getpwall", lambda: [alice, same_uid])
    assert path_trust.trusted_gids() == {gid} and path_trust.others_may_change(project) is None
    monkeypatch.setattr(pwd, "getpwall", lambda: [alice, eve])
    assert path_trust.trusted_gids() == set()
    why = path_trust.others_may_change(project)
    assert "its group (gid %d) may write it, and the group is not trusted" % gid in why
    monkeypatch.setenv("MODAK_TRUSTED_GROUPS", str(gid))          # the site may still list it
    assert path_trust.trusted_gids() == {gid}
