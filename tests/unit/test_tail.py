"""tail.last_lines: the end of a file being written, bounded and printable whatever the file holds."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile
import threading

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import tail


def test_last_lines_skips_blank_lines_and_keeps_the_order(tmp_path):
    path = tmp_path / "log"
    path.write_text("a\nb\n\n  \nc\n")
    assert tail.last_lines(str(path), 2) == ["b", "c"]
    assert tail.last_lines(str(path), 1) == ["c"]


def test_missing_file_empty_path_and_zero_lines_give_nothing(tmp_path):
    assert tail.last_lines(str(tmp_path / "absent")) == []
    assert tail.last_lines(None) == [] and tail.last_lines("") == []
    assert tail.last_lines(str(tmp_path), 1) == []                      # a directory is not read


def test_terminal_escapes_and_control_characters_are_shown_as_question_marks(tmp_path):
    path = tmp_path / "log"
    path.write_bytes(b"ok\n\x1b]0;pwned\x07\x1b[2Jstep\tdone \xff\n")
    assert tail.last_lines(str(path)) == ["?]0;pwned??[2Jstep\tdone \ufffd"]


def test_a_huge_file_is_read_from_its_end_only_and_lines_are_cut(tmp_path):
    path = tmp_path / "log"
    with open(str(path), "w") as handle:
        handle.write("x" * 10000000 + "\n" + "y" * 1000 + "\nlast\n")
    lines = tail.last_lines(str(path), 5)
    assert lines[-1] == "last" and lines[0] == "y" * (tail.MAX_LINE - 3) + "..."
    assert len(lines) == 2                             # the 10 MB line is outside the 4 KiB window


def test_a_fifo_does_not_block(tmp_path):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    found = []
    reader = threading.Thread(target=lambda: found.append(tail.last_lines(fifo)))
    reader.daemon = True
    reader.start()
    reader.join(5)
    assert found == [[]]


def test_a_link_is_not_followed(tmp_path):
    """A job output that is a symbolic link (to a file the job may not read, /etc/shadow in the review) shows
    nothing: the file is opened without following links."""
    secret = tmp_path / "secret"
    secret.write_text("root:$6$hash:19000::::::\n")
    link = tmp_path / "job.out"
    link.symlink_to(secret)
    assert tail.last_lines(str(link), 3) == []
    assert tail.last_lines(str(secret), 3) == ["root:$6$hash:19000::::::"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to read as someone else than the job's user")
def test_a_directory_the_job_turns_into_a_link_is_not_followed():
    """The job (another user, uid 1) turns the directory of its output, sub/, into a link to a directory of a file
    only root may read: root's progress line and failure message show nothing of it (before: the file's lines)."""
    base = tempfile.mkdtemp(prefix="modak-tail-", dir="/tmp")
    try:
        _turn_into_a_link(pathlib.Path(base))
    finally:
        shutil.rmtree(base)


def _turn_into_a_link(tmp_path):
    os.chmod(str(tmp_path), 0o755)
    secret = tmp_path / "private"
    secret.mkdir()
    (secret / "job.out").write_text("root:$6$hash:19000::::::\n")
    (secret / "job.out").chmod(0o600)
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "job.out").write_text("step 1\n")
    for path in (work, work / "sub", work / "sub" / "job.out"):
        os.chown(str(path), 1, 1)
    assert tail.last_lines(str(work / "sub" / "job.out")) == ["step 1"]
    subprocess.run(["setpriv", "--reuid=1", "--regid=1", "--clear-groups", "sh", "-c",
                    'rm -r "$0/sub" && ln -s "$1" "$0/sub"', str(work), str(secret)], check=True)
    assert os.path.islink(str(work / "sub"))
    assert tail.last_lines(str(work / "sub" / "job.out"), 3) == []


def test_following_goes_on_past_a_line_longer_than_the_window(tmp_path):
    """A progress bar's carriage returns make one line of more than the window: it is shown cut, and what follows
    is read (before, the offset never moved)."""
    path = tmp_path / "out"
    path.write_bytes(b"x\r" * 40000 + b"\ndone\n")
    lines, offset = tail.new_lines(str(path), 0, max_bytes=65536)
    assert offset == 65536 and lines
    more, offset = tail.new_lines(str(path), offset, max_bytes=65536)
    assert more[-1] == "done" and offset == path.stat().st_size


def test_following_a_truncated_file_starts_again_from_its_start(tmp_path):
    path = tmp_path / "out"
    path.write_text("one\ntwo\nthree\n")
    _lines, offset = tail.new_lines(str(path), 0)
    path.write_text("new\n")
    lines, offset = tail.new_lines(str(path), offset)
    assert lines == ["new"] and offset == 4
