"""The trust model of cached and staged images (docs/containers.md), run by bash as real users against real
directories: the job's check lines as the job's user, another user's changes through setpriv.

The job's state between its check and its launch is ``$IMAGE``: a test runs the check lines as the user and
prints ``$IMAGE``, lets the other user act (the swap), then launches ``$IMAGE`` as the user, which is exactly the
window the job script leaves."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names, registry
from ansible_collections.sodalite.modak.plugins.module_utils.shell import quote as shell_quote

URI = "docker://registry.example/modak/pytorch:2.5"
USER, PRIVATE = 1, 1       # daemon: its primary group is its own (daemon, no other member)
OTHER = 2                  # bin: another user
SHARED = 100               # users: a primary group that users share

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv to act as other users")


def as_user(uid, gid, script, groups=(), env=None):
    ids = ["--groups=%s" % ",".join(map(str, groups))] if groups else ["--clear-groups"]
    return subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid] + ids + ["bash", "-c", script],
                          capture_output=True, text=True, check=False, timeout=30,
                          env=dict({"PATH": "/usr/bin:/bin", "HOME": "/"}, **(env or {})))


def directory(path, uid, gid, mode):
    os.makedirs(path, exist_ok=True)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    return path


def file(path, text, uid, gid, mode):
    with open(path, "w") as handle:
        handle.write(text)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    return path


def check_swap_launch(engine, image_dir, user, swap, env=None):
    """(check as the user, the other user's swap, the launch as the user): the launch's output, or the check's
    refusal (its CompletedProcess)."""
    lines = registry.get(engine).check_lines(URI, shell_quote(image_dir))
    checked = as_user(*user["ids"], "\n".join(lines + ['printf "%s" "$IMAGE"']), groups=user.get("groups", ()),
                      env=env)
    if checked.returncode != 0:
        return checked
    as_user(OTHER, SHARED, swap, groups=(SHARED,))
    launched = as_user(*user["ids"], 'cat -- "$IMAGE" 2>/dev/null || cat -- "$IMAGE/bin/python"',
                       groups=user.get("groups", ()), env={"IMAGE": checked.stdout})
    return launched.stdout


def sif(image_dir):
    return os.path.join(image_dir, names.cache_name(URI, ".sif"))


def test_an_image_in_a_directory_a_group_shares_is_not_swapped_between_check_and_launch(base):
    """A group-writable image directory (2770, the project's group): the user's own image passed the check, then a
    member renamed another file over it and the launch ran the member's (row 6). Now the check refuses the
    directory: no one else may rename in the directories of the path launched."""
    shared = directory(os.path.join(base, "project"), 0, SHARED, 0o2770)
    file(sif(shared), "user's image", USER, PRIVATE, 0o644)
    file(os.path.join(shared, "evil"), "other's image", OTHER, SHARED, 0o644)
    outcome = check_swap_launch("apptainer", shared, {"ids": (USER, PRIVATE), "groups": (PRIVATE, SHARED)},
                                'mv -f %s %s' % (shell_quote(os.path.join(shared, "evil")), shell_quote(sif(shared))))
    assert not isinstance(outcome, str), "launched: %s" % outcome
    assert outcome.returncode == 1 and "others may change it or its directory (%s)" % shared in outcome.stderr


def test_a_link_to_the_image_directory_is_resolved_once_and_the_launch_uses_that_path(base):
    """The image directory named through a link in another user's directory: the check resolves it and the launch
    uses the resolved path, so repointing the link after the check changes nothing (before, the launch followed
    the repointed link to the other user's image)."""
    mine = directory(os.path.join(base, "mine"), USER, PRIVATE, 0o755)
    file(sif(mine), "user's image", USER, PRIVATE, 0o644)
    theirs = directory(os.path.join(base, "theirs"), OTHER, SHARED, 0o755)
    evil = directory(os.path.join(theirs, "evil"), USER, PRIVATE, 0o755)    # the user's files, copied there
    file(sif(evil), "other's image", USER, PRIVATE, 0o644)
    link = os.path.join(theirs, "images")
    os.symlink(mine, link)
    os.lchown(link, OTHER, SHARED)
    outcome = check_swap_launch("apptainer", link, {"ids": (USER, PRIVATE)},
                                "ln -sfn %s %s" % (shell_quote(evil), shell_quote(link)))
    assert outcome == "user's image"


@pytest.mark.parametrize("mode", [0o1777, 0o3770])
def test_a_sticky_shared_directory_is_accepted_and_nobody_renames_the_users_image(base, mode):
    """A sticky directory others write (/tmp, a 3770 project directory): they cannot rename what is not theirs."""
    shared = directory(os.path.join(base, "scratch"), 0, SHARED, mode)
    file(sif(shared), "user's image", USER, PRIVATE, 0o644)
    file(os.path.join(shared, "evil"), "other's image", OTHER, SHARED, 0o644)
    outcome = check_swap_launch("apptainer", shared, {"ids": (USER, PRIVATE), "groups": (PRIVATE, SHARED)},
                                'mv -f %s %s' % (shell_quote(os.path.join(shared, "evil")), shell_quote(sif(shared))))
    assert outcome == "user's image"


def test_a_group_the_site_lists_may_write_the_image_directory(base):
    shared = directory(os.path.join(base, "project"), 0, SHARED, 0o2770)
    file(sif(shared), "user's image", USER, PRIVATE, 0o644)
    outcome = check_swap_launch("apptainer", shared, {"ids": (USER, PRIVATE), "groups": (PRIVATE, SHARED)}, "true",
                                env={"MODAK_TRUSTED_GROUPS": "users"})
    assert outcome == "user's image"


@pytest.mark.parametrize("owner,group,mode", [
    (OTHER, SHARED, 0o755),     # another user's directory: they rename the image
    (0, 0, 0o777),              # world-writable without the sticky bit
    (USER, SHARED, 0o775),      # the user's, but a shared group writes it
])
def test_a_parent_others_may_change_is_refused(base, owner, group, mode):
    parent = directory(os.path.join(base, "parent"), owner, group, mode)
    images = directory(os.path.join(parent, "images"), USER, PRIVATE, 0o755)
    file(sif(images), "user's image", USER, PRIVATE, 0o644)
    outcome = check_swap_launch("apptainer", images, {"ids": (USER, PRIVATE)}, "true")
    assert not isinstance(outcome, str) and outcome.returncode == 1
    assert "(%s)" % parent in outcome.stderr


def charliecloud_image(base, gid):
    images = directory(os.path.join(base, "images"), USER, gid, 0o755)
    image = directory(os.path.join(images, names.cache_name(URI)), USER, gid, 0o755)
    directory(os.path.join(image, "bin"), USER, gid, 0o755)
    directory(os.path.join(image, "var"), USER, gid, 0o755)
    directory(os.path.join(image, "var", "mail"), USER, gid, 0o2775)      # Debian's /var/mail
    file(os.path.join(image, "bin", "python"), "user's python", USER, gid, 0o664)
    return images, os.path.join(image, "bin", "python")


def test_a_group_writable_file_of_a_shared_primary_group_is_refused(base):
    """Users who share a primary group (users): the user's converted image has group-writable files of that group;
    before, the check accepted them and another member rewrote the image's program before the launch (row 18)."""
    images, python = charliecloud_image(base, SHARED)
    outcome = check_swap_launch("charliecloud", images, {"ids": (USER, SHARED)},
                                "echo other\\'s python > %s" % shell_quote(python))
    assert not isinstance(outcome, str), "launched: %s" % outcome
    assert outcome.returncode == 1 and "not this user's own image" in outcome.stderr


def test_group_writable_files_of_the_users_private_group_or_a_listed_group_are_accepted(base):
    images, _python = charliecloud_image(base, PRIVATE)
    assert check_swap_launch("charliecloud", images, {"ids": (USER, PRIVATE)}, "true") == "user's python"
    shutil.rmtree(images)
    images, _python = charliecloud_image(base, SHARED)
    assert check_swap_launch("charliecloud", images, {"ids": (USER, SHARED)}, "true",
                             env={"MODAK_TRUSTED_GROUPS": str(SHARED)}) == "user's python"


def _with_pauses(lines, sync):
    """``lines`` with a pause after each trust check (the end of each block that stops the job when the check
    fails): the job touches ``<n>.checked`` and waits for ``<n>.go``, so the other user acts in that window."""
    out, window = [], 0
    for at, line in enumerate(lines):
        out.append(line)
        if line == "fi" and at >= 2 and lines[at - 1] == "  exit 1" and "$MODAK_UNTRUSTED" in lines[at - 2]:
            out.append("touch {0}/{1}.checked; while [ ! -e {0}/{1}.go ]; do sleep 0.02; done".format(sync, window))
            window += 1
    return out


def run_with_windows(engine, fetch, image_dir, user, act, base):
    """The job's image lines (``fetch``: image_fetch job, else staged) and a launch, run by bash as the user; in the
    window after each of its trust checks the other user runs ``act``. The launch's output, or the job's refusal
    (its CompletedProcess)."""
    runtime = registry.get(engine)
    lines = (runtime.fetch_lines if fetch else runtime.check_lines)(URI, shell_quote(image_dir))
    sync = directory(os.path.join(base, "sync-%s-%d" % (engine, fetch)), 0, 0, 0o1777)
    stubs = directory(os.path.join(base, "bin"), 0, 0, 0o755)
    for tool, body in (("apptainer", '[ "$1" = pull ] && echo "user\'s image" > "$3"'),
                       ("ch-image", "true"), ("ch-fromhost", "true"),
                       ("ch-convert", 'mkdir -p "$6/bin" && echo "user\'s image" > "$6/bin/python"')):
        file(os.path.join(stubs, tool), "#!/bin/bash\n%s\n" % body, 0, 0, 0o755)
    script = "\n".join(["set -eo pipefail"] + _with_pauses(lines, sync)
                       + ['cat -- "$IMAGE" 2>/dev/null || cat -- "$IMAGE/bin/python"'])
    ids = ["--groups=%s" % ",".join(map(str, user["groups"]))]
    job = subprocess.Popen(["setpriv", "--reuid=%d" % user["ids"][0], "--regid=%d" % user["ids"][1]] + ids
                           + ["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={"PATH": "%s:/usr/bin:/bin" % stubs, "HOME": "/", "USER": "daemon"})
    window, deadline = 0, time.monotonic() + 30
    while job.poll() is None and time.monotonic() < deadline:
        if os.path.exists(os.path.join(sync, "%d.checked" % window)):
            as_user(OTHER, SHARED, act, groups=(SHARED,))
            open(os.path.join(sync, "%d.go" % window), "w").close()
            window += 1
        time.sleep(0.01)
    out, err = job.communicate(timeout=30)
    if job.returncode != 0:
        return subprocess.CompletedProcess(job.args, job.returncode, out, err)
    return out.strip()


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud"])
@pytest.mark.parametrize("fetch", [False, True])
@pytest.mark.parametrize("mode", [0o1777, 0o3770], ids=["1777", "3770"])
def test_an_image_another_user_creates_after_the_check_is_never_launched(base, engine, fetch, mode):
    """A sticky shared image directory (accepted: nobody renames what is not theirs), the image missing: the check
    passed a missing image, and the test that decided the launch came after it, so an image another user created in
    between was launched (staged and image_fetch: job). Now the trust check is the last test before the launch and
    refuses a missing image: whatever the other user creates after any check, the job launches the user's own
    image or stops."""
    shared = directory(os.path.join(base, "shared"), 0, SHARED, mode)
    image = os.path.join(shared, names.cache_name(URI, ".sif" if engine == "apptainer" else ""))
    plant = ("[ -e {0} ] || {{ mkdir -p {0}/bin && echo other\\'s image > {0}/bin/python; }}"
             if engine == "charliecloud" else "[ -e {0} ] || echo other\\'s image > {0}").format(shell_quote(image))
    outcome = run_with_windows(engine, fetch, shared, {"ids": (USER, PRIVATE), "groups": (PRIVATE, SHARED)}, plant,
                               base)
    assert not isinstance(outcome, str), "launched: %s" % outcome
    assert outcome.returncode == 1 and "other's image" not in outcome.stdout
    assert "not this user's own image" in outcome.stderr or "no image at" in outcome.stderr, outcome.stderr


@pytest.mark.parametrize("engine", ["apptainer", "charliecloud"])
def test_an_image_the_job_fetches_into_a_sticky_shared_directory_is_launched(base, engine):
    """The same windows with nobody acting: the job pulls the image and launches it."""
    shared = directory(os.path.join(base, "shared"), 0, 0, 0o1777)
    assert run_with_windows(engine, True, shared, {"ids": (USER, PRIVATE), "groups": (PRIVATE,)}, "true",
                            base) == "user's image"


EVE = 4242                 # an account with no passwd entry of its own here; the stub getent lists it


def test_a_private_group_that_is_another_accounts_primary_group_is_not_trusted(base):
    """The user's group is named as the user with no member listed, but another account's passwd entry names it as
    its primary group (`useradd -g daemon eve`: a group lists only supplementary members). Before, the check took
    the group as the user's private one, accepted the image's group-writable program, and that account rewrote it
    before the launch. Now a group that is another account's primary group is not trusted (a stub getent adds
    that account to the passwd database)."""
    images, python = charliecloud_image(base, PRIVATE)
    stubs = directory(os.path.join(base, "bin"), 0, 0, 0o755)
    file(os.path.join(stubs, "getent"), '#!/bin/bash\n/usr/bin/getent "$@"\nrc=$?\n'
         '[ "$*" = passwd ] && echo "eve:x:%d:%d::/:/bin/sh"\nexit $rc\n' % (EVE, PRIVATE), 0, 0, 0o755)
    lines = registry.get("charliecloud").check_lines(URI, shell_quote(images))
    env = {"PATH": "%s:/usr/bin:/bin" % stubs}
    checked = as_user(USER, PRIVATE, "\n".join(lines + ['printf "%s" "$IMAGE"']), env=env)
    if checked.returncode == 0:
        as_user(EVE, PRIVATE, "echo eve\\'s python > %s" % shell_quote(python))
        launched = as_user(USER, PRIVATE, 'cat -- "$IMAGE/bin/python"', env={"IMAGE": checked.stdout})
        pytest.fail("launched: %s" % launched.stdout)
    assert checked.returncode == 1 and "not this user's own image" in checked.stderr
    # without that account, the same image passes (the group is the user's private one)
    assert as_user(USER, PRIVATE, "\n".join(lines + ['printf "%s" "$IMAGE"'])).returncode == 0
