"""Reading the results store (what optimise and perf_model do, in check mode too) never writes to it."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3

import pytest

from perf_records import records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils.perf import store


def snapshot(directory):
    return dict((name, hashlib.sha256(open(os.path.join(directory, name), "rb").read()).hexdigest())
                for name in sorted(os.listdir(directory)))


def rollback_store(path, rows):
    """A store in SQLite's default (rollback journal) mode, as another tool or an older modak leaves it."""
    conn = sqlite3.connect(path)
    conn.execute(store._DDL)
    conn.executemany("INSERT INTO runs (workload, hw_class, config_key, inserted_at, record) VALUES (?, ?, ?, 0, ?)",
                     [(r.get("workload", "x"), "c", "k", json.dumps(r)) for r in rows])
    conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", ["rollback", "empty file", "no table"])
def test_load_leaves_the_store_byte_for_byte_as_it_was(tmp_path, records, kind):
    path = str(tmp_path / "results.sqlite")
    if kind == "rollback":
        rollback_store(path, records[:5])
    elif kind == "empty file":
        open(path, "w").close()
    else:
        sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.commit()
    before = snapshot(str(tmp_path))
    loaded = store.load(path)
    assert len(loaded) == (5 if kind == "rollback" else 0)
    assert snapshot(str(tmp_path)) == before
