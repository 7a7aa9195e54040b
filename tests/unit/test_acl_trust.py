"""Hardening, round five, item 6: POSIX ACLs under the trust model. `setfacl -m u:colleague:rwx dir` shows as group
write bits (the ACL's mask), which modak read as the user's private group: a script in such a directory was accepted
and an image in one launched, though the colleague may swap both. Each ACL entry is now judged by its effective
right (the entry and the mask together). The ACLs are set as setfacl(1) sets them, through the
system.posix_acl_access attribute (acl(5)), so that no acl package is needed."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import path_trust
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import trust

USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NOBODY = 65534
UNDEFINED = 0xFFFFFFFF


def set_acl(path, named, mask=7, group=5, mode_bits=None):
    """Gives ``path`` an access ACL: its owner rwx, its group ``group``, the named (tag, id, perm) entries, the mask,
    others r-x (what `setfacl -m u:ID:rwx` leaves)."""
    entries = [(USER_OBJ, 7, UNDEFINED), (GROUP_OBJ, group, UNDEFINED)]
    entries += [(tag, perm, ident) for tag, ident, perm in named]
    entries += [(MASK, mask, UNDEFINED), (OTHER, 5, UNDEFINED)]
    entries.sort(key=lambda entry: (entry[0], entry[2]))
    blob = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)
    try:
        os.setxattr(str(path), path_trust.ACL_XATTR, blob)
    except OSError as exc:
        pytest.skip("this file system takes no ACL (%s)" % exc)


@pytest.fixture
def shared(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    os.chmod(str(directory), 0o755)
    return directory


def test_a_named_user_who_may_write_the_directory_is_someone_else(shared):
    set_acl(shared, [(USER, NOBODY, 7)])
    assert oct(os.stat(str(shared)).st_mode & 0o070) == "0o70"        # the mask, shown as the group's bits
    why = path_trust.others_may_rename_in(str(shared))
    assert why and "ACL lets another user (uid %d) write it" % NOBODY in why


def test_a_named_user_whose_write_the_mask_takes_away_is_not(shared):
    set_acl(shared, [(USER, NOBODY, 7)], mask=5)
    assert path_trust.others_may_rename_in(str(shared)) is None


def test_an_untrusted_named_group_that_may_write_is_someone_else(shared):
    set_acl(shared, [(GROUP, 4242, 7)])
    assert "gid 4242" in path_trust.others_may_rename_in(str(shared))


def test_a_script_in_a_directory_a_colleague_may_write_through_an_acl_is_refused(shared):
    script = shared / "job.sh"
    script.write_text("#!/bin/bash\n")
    assert path_trust.others_may_swap(str(script)) is None
    set_acl(shared, [(USER, NOBODY, 7)])
    assert "ACL lets another user" in path_trust.others_may_swap(str(script))


def test_a_script_a_colleague_may_write_through_its_own_acl_is_refused(shared):
    script = shared / "job.sh"
    script.write_text("#!/bin/bash\n")
    os.chmod(str(script), 0o644)
    set_acl(script, [(USER, NOBODY, 6)])
    assert "its ACL lets another user" in path_trust.others_may_swap(str(script))


def test_a_sticky_directory_with_an_acl_is_still_accepted(shared):
    os.chmod(str(shared), 0o1777)
    set_acl(shared, [(USER, NOBODY, 7)])
    os.chmod(str(shared), 0o1775)
    assert path_trust.others_may_rename_in(str(shared)) is None


def _job_check(directory):
    """The job's own check of a directory (runtimes/trust.py's shell), as a job script runs it."""
    script = "\n".join(trust.resolve_functions(directories_only=True)
                       + ['out="$(modak_untrusted_dirs %s)"' % directory, 'echo "[$out]"'])
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60).stdout


def test_the_jobs_own_check_sees_a_named_user_who_may_write(shared):
    assert _job_check(shared) == "[]\n"
    set_acl(shared, [(USER, NOBODY, 7)])
    assert str(shared) in _job_check(shared)


def test_the_jobs_own_check_accepts_an_acl_whose_mask_takes_write_away(shared):
    set_acl(shared, [(USER, NOBODY, 7)], mask=5)
    if shutil.which("getfacl") is None:     # without getfacl an ACL cannot be read: refused
        assert "(an ACL, and no getfacl to read it)" in _job_check(shared)
    else:
        assert _job_check(shared) == "[]\n"


def test_a_link_to_a_file_or_directory_with_such_an_acl_is_judged_by_what_it_names(shared):
    """A review of the fix: the mode was read through the link (os.stat) and the ACL from the link itself, which
    has none."""
    real = shared / "real.sh"
    real.write_text("#!/bin/bash\n")
    set_acl(real, [(USER, NOBODY, 6)])
    (shared / "script.sh").symlink_to("real.sh")
    assert "its ACL lets another user" in path_trust.others_may_swap(str(shared / "script.sh"))
    directory = shared / "realdir"
    directory.mkdir()
    set_acl(directory, [(USER, NOBODY, 7)])
    (shared / "wd").symlink_to("realdir")
    assert "ACL lets another user" in path_trust.others_may_rename_in(str(shared / "wd"))


def test_the_jobs_own_check_sees_the_acl_of_the_image_or_checkpoint_directory_itself(shared):
    """A review of the fix: the job checked the ACLs of the directories above an image, not the image's own."""
    image = shared / "image"
    image.mkdir()
    script = "\n".join(trust.resolve_functions() + ['out="$(modak_untrusted %s)"' % image, 'echo "[$out]"'])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.stdout == "[]\n", done.stderr
    set_acl(image, [(USER, NOBODY, 7)])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert str(image) in done.stdout, done.stderr


def test_the_jobs_own_check_sees_an_acl_inside_an_image(shared):
    if shutil.which("getfacl") is None:
        pytest.skip("an ACL inside an image is read with getfacl")
    image = shared / "image"
    (image / "bin").mkdir(parents=True)
    (image / "bin" / "sh").write_text("#!/bin/sh\n")
    set_acl(image / "bin" / "sh", [(USER, NOBODY, 6)])
    script = "\n".join(trust.resolve_functions() + ['out="$(modak_untrusted %s)"' % image, 'echo "[$out]"'])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert str(image) in done.stdout, done.stderr


def test_the_working_directory_is_checked_where_the_files_are_made_not_behind_a_link(tmp_path):
    """A review of the fix: the check ran on `pwd -P` while mktemp made the file through the logical $PWD, whose link
    lay in a directory others may write (and which another user could repoint after the check)."""
    own = tmp_path / "own"
    own.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(str(shared), 0o777)
    (shared / "run").symlink_to(own)
    script = "\n".join(["set -e", "cd %s" % (shared / "run")] + trust.workdir_lines("a file")
                       + ['echo "made in $MODAK_WORKDIR"'])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0 and done.stdout == "made in %s\n" % own, done.stderr
    from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtimes
    assert '"$MODAK_WORKDIR/.modak-env.XXXXXX"' in "\n".join(runtimes.get("charliecloud").env_lines([("A", "x")]))
