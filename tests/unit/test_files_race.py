"""Reading the previous result (for --diff and 'changed') never follows a link swapped in after the check."""

from __future__ import annotations

import os
import sys
import threading

from ansible_collections.sodalite.modak.plugins.module_utils import files
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError

TRIES = 20000


def test_a_link_swapped_in_between_check_and_read_never_leaks_its_target(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("the target's content\n")
    out = tmp_path / "out"
    out.mkdir()
    path = str(out / "job.sh")
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            with open(path + ".new", "w") as handle:
                handle.write("#!/bin/bash\n")
            os.replace(path + ".new", path)
            os.symlink(str(secret), path + ".lnk")
            os.replace(path + ".lnk", path)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    thread = threading.Thread(target=swapper)
    thread.start()
    leaks = refused = 0
    try:
        for _try in range(TRIES):
            try:
                before = files.read_for_diff(str(out), "job.sh")
            except OutputError:
                refused += 1
                continue
            leaks += int(before is not None and "target" in before)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
    assert leaks == 0, "%d of %d reads leaked the link's target (%d refused)" % (leaks, TRIES, refused)


def test_reading_a_fifo_planted_as_the_result_does_not_hang(tmp_path):
    fifo = str(tmp_path / "job.sh")
    os.mkfifo(fifo)
    said = []

    def read():
        try:
            said.append(files.read_for_diff(str(tmp_path), "job.sh"))
        except OutputError as exc:
            said.append(str(exc))
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():   # unblock the reader so that the test run ends
        with open(fifo, "w"):
            pass
    assert said and "not a regular file" in said[0], said
