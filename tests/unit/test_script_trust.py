"""batch_job submits a job script by its path, and the scheduler reads it then: the script must be one that nobody
else can change or swap before (docs/containers.md, trust model). Another member of a shared work directory's group
(bin, in the shared group ``users``), acting through setpriv, renames a script of their own over the user's between
its placement and its submission."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run

OTHER, SHARED = 2, 100                 # bin, and users: a group that other users share

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv to act as another user")


def member(script):
    return subprocess.run(["setpriv", "--reuid=%d" % OTHER, "--regid=%d" % OTHER, "--groups=%d" % SHARED,
                           "bash", "-c", script], capture_output=True, text=True, check=False, timeout=30,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/"})


def project(base, mode):
    path = os.path.join(base, "project")
    os.mkdir(path)
    os.chown(path, 0, SHARED)
    os.chmod(path, mode)
    script = os.path.join(path, "job.sh")
    with open(path + "/job.sh", "w") as handle:
        handle.write("#!/bin/bash\necho the job of the user\n")
    os.chmod(script, 0o700)
    return path, script


def swap(path, marker):
    return member("printf '#!/bin/bash\\ntouch %s\\n' >%s/.theirs && chmod 0755 %s/.theirs && mv -f %s/.theirs %s/job.sh"
                  % (marker, path, path, path, path))


def test_a_script_in_a_directory_a_shared_group_may_write_is_not_submitted(base):
    """Before, the script was submitted as it stood: the member's swap ran their script as the user."""
    path, script = project(base, 0o2770)
    with pytest.raises(SubmitError, match=r"its directory .*/project: its group \(gid 100\) may write it"):
        run(Request(script=script, scheduler="local", chdir=path))
    marker = os.path.join(base, "ran-theirs")
    assert swap(path, marker).returncode == 0                    # the member can: the group writes the directory
    with pytest.raises(SubmitError, match="refusing to submit"):
        run(Request(script=script, scheduler="local", chdir=path))
    time.sleep(0.3)
    assert not os.path.exists(marker)


def ended(path, job_id):
    for _try in range(400):
        if os.path.exists(os.path.join(path, ".modak", "%s.rc" % job_id)):
            return True
        time.sleep(0.025)
    return False


def test_a_sticky_project_directory_or_a_listed_group_is_accepted(base, monkeypatch):
    path, script = project(base, 0o3770)
    assert swap(path, os.path.join(base, "ran-theirs")).returncode != 0      # the sticky bit stops the rename
    assert ended(path, run(Request(script=script, scheduler="local", chdir=path))["job_id"])
    os.chmod(path, 0o2770)
    monkeypatch.setenv("MODAK_TRUSTED_GROUPS", "users")
    assert ended(path, run(Request(script=script, scheduler="local", chdir=path, force=True))["job_id"])


def test_a_script_others_may_write_or_in_a_parent_others_may_rename_is_not_submitted(base):
    path, script = project(base, 0o700)
    os.chmod(script, 0o722)
    with pytest.raises(SubmitError, match="may be written by others"):
        run(Request(script=script, scheduler="local", chdir=path))
    os.chmod(script, 0o700)
    os.chmod(base, 0o777)                       # others may rename project/ and put their own in its place
    with pytest.raises(SubmitError, match="every user may write it"):
        run(Request(script=script, scheduler="local", chdir=path))


def shared_sticky(base):
    """A project directory a group shares with the sticky bit (3770: accepted), and the user's own private jobs
    directory with the script."""
    shared = os.path.join(base, "shared")
    os.mkdir(shared)
    os.chown(shared, 0, SHARED)
    os.chmod(shared, 0o3770)
    jobs = os.path.join(base, "mine", "jobs")
    os.makedirs(jobs, 0o700)
    script = os.path.join(jobs, "job.sh")
    with open(script, "w") as handle:
        handle.write("#!/bin/bash\necho the job of the user\n")
    os.chmod(script, 0o700)
    return shared, jobs, script


@pytest.mark.parametrize("link_name, target, given", [
    ("jobs", "mine/jobs", "shared/jobs/job.sh"),             # a directory of the path is the member's link
    ("job.sh", "mine/jobs/job.sh", "shared/job.sh"),         # the script named is the member's link
])
def test_a_link_another_member_owns_in_a_sticky_directory_is_not_followed(base, link_name, target, given):
    """The member's link to the user's own script (or its directory) passed the check: the stat followed it; the
    member then repointed it to a script of theirs before the scheduler read the path."""
    shared, _jobs, _script = shared_sticky(base)
    link = os.path.join(shared, link_name)
    os.symlink(os.path.join(base, target), link)
    os.lchown(link, OTHER, OTHER)
    with pytest.raises(SubmitError, match=r"%s is a link of another user \(uid 2\) in the shared sticky directory"
                       % link):
        run(Request(script=os.path.join(base, given), scheduler="local", chdir=os.path.join(base, "mine")))
    theirs = member("ln -sfn /tmp %s" % link)       # the member may repoint it: the sticky bit does not stop them
    assert theirs.returncode == 0, theirs.stderr


def test_a_link_of_the_users_own_in_a_sticky_directory_is_followed(base):
    shared, jobs, _script = shared_sticky(base)
    os.symlink(jobs, os.path.join(shared, "jobs"))
    assert member("ln -sfn /tmp %s/jobs" % shared).returncode != 0         # nobody else may replace it
    assert ended(jobs, run(Request(script=os.path.join(shared, "jobs", "job.sh"), scheduler="local",
                                   chdir=jobs))["job_id"])
