"""Fixtures of the unit tests that act as other users."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


@pytest.fixture
def base():
    """A directory every user can enter, for tests that act as other users (pytest's own temporary directories are
    0700)."""
    path = tempfile.mkdtemp(prefix="modak-users-", dir="/tmp")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)
