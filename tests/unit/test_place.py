"""The collection's one placement of a file into an output directory (files.place, files.read_for_diff): what it
reports, what it writes, what it refuses, and the races of another user who can write the directory, forced
deterministically at the moment between looking at the path and acting on it. The same placement through real
ansible-playbook runs, with a real other user: tests/integration/test_remote_files.py."""

from __future__ import annotations

import errno
import os
import time
import stat

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate

SECRET = "the playbook user's secret\n"


def mode_of(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


@pytest.fixture
def out(tmp_path):
    return tmp_path / "out"


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim"
    path.write_text(SECRET)
    os.chmod(str(path), 0o600)
    return path


def test_it_writes_once_then_reports_the_same(out):
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.CHANGED
    target = out / "job.sh"
    assert target.read_text() == "echo one\n" and mode_of(target) == 0o755
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.SAME
    assert files.place(str(out), "job.sh", b"echo two\n", 0o755) == files.CHANGED
    assert target.read_text() == "echo two\n" and sorted(os.listdir(str(out))) == ["job.sh"]


def test_check_mode_compares_and_writes_nothing(out):
    assert files.place(str(out), "job.sh", "echo one\n", 0o755, check_mode=True) == files.CHANGED
    assert not out.exists()
    files.place(str(out), "job.sh", "echo one\n", 0o755)
    os.chmod(str(out / "job.sh"), 0o700)
    assert files.place(str(out), "job.sh", "echo one\n", 0o755, check_mode=True) == files.MODE
    assert mode_of(out / "job.sh") == 0o700


def test_only_the_mode_is_set_when_the_content_is_the_same(out):
    files.place(str(out), "job.sh", "echo one\n", 0o755)
    os.chmod(str(out / "job.sh"), 0o700)
    inode = os.stat(str(out / "job.sh")).st_ino
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.MODE
    assert mode_of(out / "job.sh") == 0o755 and os.stat(str(out / "job.sh")).st_ino == inode


def test_a_link_at_the_path_is_replaced_never_followed(out, victim):
    out.mkdir()
    victim.write_text("echo one\n")            # the same text: still a link, so it is replaced
    os.symlink(str(victim), str(out / "job.sh"))
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.CHANGED
    assert not os.path.islink(str(out / "job.sh")) and mode_of(victim) == 0o600


@pytest.mark.parametrize("link", [False, True], ids=["directory", "link to a directory"])
def test_a_directory_at_the_path_is_refused_and_kept(tmp_path, out, link):
    """Finding 2 of issue 31: nothing moves into the (linked) directory, no temporary file is left."""
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if link:
        os.symlink(str(elsewhere), str(out / "job.sh"))
    else:
        os.rename(str(elsewhere), str(out / "job.sh"))
        elsewhere = out / "job.sh"
    with pytest.raises(OutputError, match="directory"):
        files.place(str(out), "job.sh", "echo one\n", 0o755)
    assert os.listdir(str(elsewhere)) == [] and os.listdir(str(out)) == ["job.sh"]


def _swap_before(monkeypatch, name, out, victim):
    """Another user's move at the moment ``os.<name>`` is called: every entry of ``out`` becomes a link to
    ``victim``; then the call goes on."""
    real = getattr(os, name)

    def swapped(*args, **kwargs):
        for entry in os.listdir(str(out)):
            os.unlink(os.path.join(str(out), entry))
            os.symlink(str(victim), os.path.join(str(out), entry))
        return real(*args, **kwargs)
    monkeypatch.setattr(os, name, swapped)


@pytest.mark.parametrize("old_mode", [0o600, None], ids=["only the mode differs", "the content differs"])
def test_a_link_swapped_in_before_the_mode_is_set_never_changes_its_target(monkeypatch, out, victim, old_mode):
    """Finding 1 of issue 31: whether the mode is set by path (chmod) or on a descriptor (fchmod), the other user
    swaps a link in just before; the link's target keeps its mode and content."""
    out.mkdir()
    files.write_atomic(str(out / "job.sh"), "echo one\n" if old_mode else "echo old\n", 0o755)
    if old_mode:
        os.chmod(str(out / "job.sh"), old_mode)
    for name in ("chmod", "fchmod"):
        _swap_before(monkeypatch, name, out, victim)
    try:
        files.write_atomic(str(out / "job.sh"), "echo one\n", 0o755)
    except (OutputError, OSError):
        pass                                    # refusing is fine; changing the victim is not
    assert mode_of(victim) == 0o600 and victim.read_text() == SECRET


def test_a_directory_swapped_in_before_the_rename_is_refused(monkeypatch, out):
    """Finding 2 of issue 31, raced: the path is checked (nothing there), then a directory appears before the
    rename; the rename fails atomically (EISDIR), the temporary file is removed, the directory kept."""
    out.mkdir()
    real = os.rename

    def rename(src, dst, **kwargs):
        os.mkdir(str(out / "job.sh"))
        return real(src, dst, **kwargs)
    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutputError, match="directory"):
        files.place(str(out), "job.sh", "echo one\n", 0o755)
    assert os.listdir(str(out)) == ["job.sh"] and os.listdir(str(out / "job.sh")) == []


def test_diff_never_reads_through_a_link(out, victim):
    """Finding 3 of issue 31: a link at the path shows as 'not a regular file', never as its target's text."""
    out.mkdir()
    os.symlink(str(victim), str(out / "job.sh"))
    before = files.read_for_diff(str(out), "job.sh")
    assert "secret" not in before and "not a regular file" in before


def test_diff_does_not_block_on_a_fifo(out):
    """Finding 3 of issue 31: a FIFO at the path is opened without blocking and said to be no regular file
    (this test would hang before; pytest-timeout or the suite's own limit ends it)."""
    out.mkdir()
    os.mkfifo(str(out / "job.sh"))
    assert "not a regular file" in files.read_for_diff(str(out), "job.sh")
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.CHANGED
    assert stat.S_ISREG(os.lstat(str(out / "job.sh")).st_mode)


def test_diff_of_a_missing_file_is_empty(out):
    assert files.read_for_diff(str(out), "job.sh") == ""
    files.place(str(out), "job.sh", "echo one\n", 0o755)
    assert files.read_for_diff(str(out), "job.sh") == "echo one\n"


def test_a_link_in_a_directory_others_can_write_is_not_followed(tmp_path):
    """The output directory's parent is writable by others: a link there (which any of them can plant) is not
    followed; a link in a directory only its owner can change is."""
    shared = tmp_path / "shared"
    shared.mkdir()
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(str(real), str(shared / "out"))
    assert files.place(str(shared / "out"), "job.sh", "echo one\n", 0o755) == files.CHANGED
    assert (real / "job.sh").read_text() == "echo one\n"
    os.chmod(str(shared), 0o777)
    with pytest.raises(OutputError, match="other users"):
        files.place(str(shared / "out"), "job.sh", "echo two\n", 0o755)
    assert (real / "job.sh").read_text() == "echo one\n"


def test_an_os_error_leaves_no_temporary_file(monkeypatch, out):
    out.mkdir()

    def fsync(_fd):
        raise OSError(errno.EIO, "I/O error")
    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError):
        files.place(str(out), "job.sh", "echo one\n", 0o755)
    assert os.listdir(str(out)) == []


def test_a_large_file_is_placed_by_a_hard_link_once(tmp_path, out, victim):
    """place_copy (the wheels of a build context): a hard link to the source, then the same; a link at the path
    is replaced, never written through."""
    source = tmp_path / "torch-2.5.1+cpu-cp311-cp311-linux_x86_64.whl"
    source.write_bytes(b"wheel" * 100)
    name = source.name
    assert files.place_copy(str(out), name, str(source), check_mode=True) == files.CHANGED and not out.exists()
    assert files.place_copy(str(out), name, str(source)) == files.CHANGED
    assert os.stat(str(out / name)).st_ino == os.stat(str(source)).st_ino
    assert files.place_copy(str(out), name, str(source)) == files.SAME
    os.unlink(str(out / name))
    os.symlink(str(victim), str(out / name))
    assert files.place_copy(str(out), name, str(source)) == files.CHANGED
    assert victim.read_text() == SECRET and not os.path.islink(str(out / name))
    with pytest.raises(OutputError):
        files.place_copy(str(out), "../x.whl", str(source))


def test_a_link_planted_among_the_wheels_never_brings_its_target_into_the_build_context(tmp_path, victim):
    """A member of a shared wheel directory plants zz-1.0-py3-none-any.whl, a link to a private file of the
    playbook's user: before, the hard link followed it and the file was in the build context (same inode)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "torch-2.5.1-cp311-none-linux_x86_64.whl").write_bytes(b"a real wheel\n")
    os.symlink(str(victim), str(wheels / "zz-1.0-py3-none-any.whl"))
    context = tmp_path / "context"
    with pytest.raises(OutputError, match="zz-1.0-py3-none-any.whl is not a regular file"):
        generate.place_wheels(str(wheels), str(context))
    placed = [os.stat(str(path)) for path in (context / "wheels").iterdir()]
    assert os.stat(str(victim)).st_ino not in [info.st_ino for info in placed]
    assert os.stat(str(victim)).st_nlink == 1
    os.mkfifo(str(wheels / "zz-1.0-py3-none-any.whl.fifo"))
    with pytest.raises(OutputError, match="not a regular file"):
        files.place_copy(str(context), "w.whl", str(wheels / "zz-1.0-py3-none-any.whl.fifo"))


def test_a_wheel_swapped_for_a_link_after_it_was_opened_is_copied_as_opened(monkeypatch, tmp_path, out, victim):
    """The wheel's name turned into a link between its opening and its hard link: the link made is not that file,
    so the wheel opened is copied instead; the link's target never lands in the output."""
    source = tmp_path / "a-1.0-py3-none-any.whl"
    source.write_bytes(b"the wheel opened\n")
    opened = files.open_file

    def open_then_swap(dir_fd, name):
        found = opened(dir_fd, name)
        if name == source.name:
            os.symlink(str(victim), str(tmp_path / "swap"))
            os.replace(str(tmp_path / "swap"), str(source))
        return found
    monkeypatch.setattr(files, "open_file", open_then_swap)
    assert files.place_copy(str(out), source.name, str(source)) == files.CHANGED
    placed = out / source.name
    assert not placed.is_symlink() and placed.read_bytes() == b"the wheel opened\n"
    assert os.stat(str(placed)).st_ino != os.stat(str(victim)).st_ino and victim.read_text() == SECRET


def test_a_set_user_id_wheel_copied_into_the_build_context_loses_that_bit(monkeypatch, tmp_path, out):
    """A wheel copied (another file system, or a hard link that named another file) keeps its permission bits only:
    a set-user-ID wheel that another user planted would otherwise become a set-user-ID file of the caller's (root
    under become) in the build context."""
    source = tmp_path / "evil-1.0-py3-none-any.whl"
    source.write_bytes(b"#!/bin/sh\n")
    os.chmod(str(source), 0o4755)

    def no_link(*_args, **_kwargs):
        raise OSError(18, "Invalid cross-device link")
    monkeypatch.setattr(os, "link", no_link)
    assert files.place_copy(str(out), source.name, str(source)) == files.CHANGED
    assert stat.S_IMODE(os.stat(str(out / source.name)).st_mode) == 0o755


@pytest.fixture
def reads_counted(monkeypatch):
    """The bytes os.read returns, counted; more than 1 MiB read in all fails at once (a planted huge file read
    whole would exhaust the memory)."""
    counted = [0]
    real_read = os.read

    def read(fd, size):
        chunk = real_read(fd, size)
        counted[0] += len(chunk)
        assert counted[0] <= 1 << 20, "read more than 1 MiB"
        return chunk
    monkeypatch.setattr(os, "read", read)
    return counted


def test_a_huge_sparse_file_planted_at_the_name_is_never_read_whole(out, reads_counted):
    """Before, place read the old file whole before comparing: a 300 MiB sparse file at the name grew the memory by
    600 MiB. The sizes are compared first, and --diff reads at most DIFF_LIMIT bytes of it."""
    out.mkdir()
    with open(str(out / "job.sh"), "wb") as handle:
        handle.truncate(1 << 32)                                   # 4 GiB, no block on the disk
    assert files.place(str(out), "job.sh", "echo one\n", 0o755, check_mode=True) == files.CHANGED
    assert "holds more than 1048576 bytes; not read" in files.read_for_diff(str(out), "job.sh")
    assert files.place(str(out), "job.sh", "echo one\n", 0o755) == files.CHANGED
    assert (out / "job.sh").read_text() == "echo one\n"
    assert reads_counted[0] <= len("echo one\n")


def test_a_file_of_the_same_size_is_read_no_further_than_the_content(out, reads_counted):
    files.place(str(out), "job.sh", "echo one\n", 0o700)
    reads_counted[0] = 0
    assert files.place(str(out), "job.sh", "echo two\n", 0o700) == files.CHANGED
    assert files.place(str(out), "job.sh", "echo two\n", 0o700) == files.SAME
    assert reads_counted[0] <= 2 * (len("echo two\n") + 1)
    small = "x" * (files.DIFF_LIMIT - 1) + "\n"
    files.place(str(out), "big.txt", small, 0o600)
    reads_counted[0] = 0
    assert files.read_for_diff(str(out), "big.txt") == small      # up to the limit, the whole text


def test_wheels_placed_into_two_contexts_look_the_same_to_a_build_cache(tmp_path):
    """ch-image's build cache keys COPY by each path's mode, size and time, the wheel directory's own too: the same
    wheels placed into a new context (the TOSCA image after the demo's, a second run) missed it, and the framework
    layer (torch, minutes) was built again. The directory now takes the newest wheel's time."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in ("torch-2.13.0-py3-none-any.whl", "filelock-4.3.1-py3-none-any.whl"):
        (wheels / name).write_bytes(b"wheel " + name.encode())
    os.utime(str(wheels / "torch-2.13.0-py3-none-any.whl"), (1000000000, 1000000000))
    times = []
    for context in ("one", "two"):
        generate.place_wheels(str(wheels), str(tmp_path / context))
        time.sleep(0.01)
        times.append(os.stat(str(tmp_path / context / "wheels")).st_mtime_ns)
    assert times[0] == times[1] == os.stat(str(wheels / "filelock-4.3.1-py3-none-any.whl")).st_mtime_ns
