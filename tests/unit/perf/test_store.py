"""The results store: keys, hardware classes, SQLite under concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3

from perf_records import hardware, records  # noqa: F401  pylint: disable=unused-import

from ansible_collections.sodalite.modak.plugins.module_utils.perf import store


def _writer(args):
    path, worker, count = args
    for i in range(count):
        store.append(path, [{"workload": "w", "config": {"threads": 1 + worker % 2, "batch_size": 64 + i},
                             "hardware": {"model": "cpu", "cores": 2, "flags": []},
                             "timing": {"per_sample_s": 0.001 * (1 + i)}, "tag": "%d-%d" % (worker, i)}])
    return count


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "results.sqlite")
    with multiprocessing.get_context("fork").Pool(4) as pool:
        written = sum(pool.map(_writer, [(path, w, 25) for w in range(4)]))
    records = store.load(path)
    assert written == 100 and len(records) == 100
    assert len(set(r["tag"] for r in records)) == 100
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_records_of_other_classes_are_kept_apart(tmp_path, records):
    path = str(tmp_path / "r.sqlite")
    other = dict(records[0], hardware=dict(records[0]["hardware"], model="Other CPU"))
    store.append(path, list(records) + [other])
    mine = store.hardware_class(records[0]["hardware"])
    assert len(store.load(path, hw_class=mine)) == len(records)
    assert store.classes(store.load(path))[store.hardware_class(other["hardware"])] == 1


def test_jsonl_and_sqlite_hold_the_same_records(tmp_path, records):
    path = str(tmp_path / "r.sqlite")
    store.append(path, records)
    assert [r["timing"] for r in store.load(path)] == [r["timing"] for r in records]


def test_config_key_fills_defaults():
    assert store.config_key({}) == store.config_key({"threads": 1, "batch_size": 64, "precision": "fp32",
                                                     "onednn": True, "compile": False})
    assert store.config_key({"precision": "bf16"}) != store.config_key({})


def test_hardware_class_separates_isa_flags():
    amx = {"model": "Xeon", "arch": "x86_64", "cores": 2, "flags": ["amx_bf16", "avx512_bf16"]}
    plain = dict(amx, flags=["avx512_bf16"])
    assert store.hardware_class(amx) != store.hardware_class(plain)


def test_local_hardware_describes_this_host():
    facts = store.local_hardware(sample_s=0.05)
    assert facts["cores"] == os.cpu_count()
    assert 0.0 <= facts["foreign_load"] <= os.cpu_count() + 1


def test_local_hardware_without_sampling_reports_no_load():
    assert store.local_hardware(sample_s=0.0)["foreign_load"] == 0.0
