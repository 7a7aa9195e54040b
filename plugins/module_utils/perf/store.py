# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark results store: SQLite (WAL, one transaction per append) or JSON lines.

A record is what ``benchmarks/workload/mnist_cnn.py`` prints: ``config``, ``hardware``, ``versions``,
``timing`` and ``load``. Records are grouped by hardware class (CPU model, cores and the ISA flags
that change which kernels run) because a performance model only transfers within one class.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from urllib.parse import quote

from ansible_collections.sodalite.modak.plugins.module_utils.errors import PerfError

from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware


class StoreError(PerfError):
    """The results store cannot be read or written (corrupt file, not a database); the file is left as it is."""


hardware_class = hardware.hardware_class  # the one definition, shared with the workload
KNOBS = ("threads", "batch_size", "precision", "channels_last", "compile", "onednn")
BUSY_TIMEOUT_S = 60.0

_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workload TEXT NOT NULL,
    hw_class TEXT NOT NULL,
    config_key TEXT NOT NULL,
    per_sample_s REAL,
    other_busy_cores REAL,
    started_at TEXT,
    inserted_at REAL NOT NULL,
    record TEXT NOT NULL
)"""


def normalise_config(config):
    """A configuration with every knob present and typed."""
    config = dict(config or {})
    return {
        "threads": int(config.get("threads", 1)),
        "batch_size": int(config.get("batch_size", 64)),
        "precision": "bf16" if config.get("precision") == "bf16" else "fp32",
        "channels_last": bool(config.get("channels_last", False)),
        "compile": bool(config.get("compile", False)),
        "onednn": bool(config.get("onednn", True)),
    }


def config_key(config):
    c = normalise_config(config)
    return "t%d-b%d-%s-cl%d-c%d-dnn%d" % (c["threads"], c["batch_size"], c["precision"], c["channels_last"],
                                          c["compile"], c["onednn"])


def valid(record):
    timing = (record or {}).get("timing") or {}
    return bool(record.get("ok", True)) and isinstance(timing.get("per_sample_s"), (int, float)) \
        and timing["per_sample_s"] > 0 and isinstance(record.get("config"), dict)


def foreign_load(record):
    value = ((record or {}).get("load") or {}).get("other_busy_cores")
    return float(value) if isinstance(value, (int, float)) else 0.0


def connect(path):
    """Open (creating) the store; WAL lets readers and one writer work at once."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = %d" % int(BUSY_TIMEOUT_S * 1000))
    for attempt in range(50):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(_DDL)
            break
        except sqlite3.OperationalError as exc:
            if attempt == 49 or "locked" not in str(exc) and "busy" not in str(exc):
                conn.close()
                raise StoreError("the results store %s cannot be opened: %s" % (path, exc))
            time.sleep(0.05 * (attempt + 1))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError("the results store %s is not a readable SQLite database (%s); it was left untouched"
                             % (path, exc))
    return conn


def append(path, records):
    """Append records in one IMMEDIATE transaction; returns how many were stored."""
    rows = []
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
            continue
        rows.append((record.get("workload", "unknown"), hardware_class(record.get("hardware")),
                     config_key(record["config"]), (record.get("timing") or {}).get("per_sample_s"),
                     foreign_load(record), record.get("started_at"), time.time(),
                     json.dumps(record, sort_keys=True)))
    if not rows:
        return 0
    conn = connect(path)
    try:
        for attempt in range(50):
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError:
                if attempt == 49:
                    raise
                time.sleep(0.05 * (attempt + 1))
        try:
            conn.executemany("INSERT INTO runs (workload, hw_class, config_key, per_sample_s, other_busy_cores, "
                             "started_at, inserted_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    return len(rows)


def load(path, hw_class=None, workload=None):
    """Records from a store (.sqlite/.db) or a JSON-lines file (.jsonl/.json), oldest first."""
    if not os.path.exists(path):
        return []
    if path.endswith((".jsonl", ".json")):
        records = load_jsonl(path)
    else:
        records = _read_rows(path)
    out = []
    for record in records:
        if hw_class is not None and hardware_class(record.get("hardware")) != hw_class:
            continue
        if workload is not None and record.get("workload") != workload:
            continue
        out.append(record)
    return out


def _read_rows(path):
    """Every stored record, read through a read-only connection: reading (check mode too) never changes the
    store, not even its journal mode or its table definitions."""
    try:
        conn = sqlite3.connect("file:%s?mode=ro" % quote(os.path.abspath(path)), uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.DatabaseError as exc:
        raise StoreError("the results store %s cannot be opened: %s" % (path, exc))
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone():
            return []
        return [json.loads(row[0]) for row in conn.execute("SELECT record FROM runs ORDER BY id")]
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise StoreError("the results store %s is corrupt (%s); it was left untouched" % (path, exc))
    finally:
        conn.close()


def load_jsonl(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        stripped = text.lstrip()
        if stripped.startswith("["):
            records = json.loads(stripped)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise StoreError("the results file %s is not JSON lines (%s)" % (path, exc))
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise StoreError("the results file %s does not hold records (JSON objects)" % path)
    return records


def classes(records):
    """{hw_class: number of valid records}."""
    out = {}
    for record in records:
        if valid(record):
            key = hardware_class(record.get("hardware"))
            out[key] = out.get(key, 0) + 1
    return out


def local_hardware(sample_s=0.5):
    """CPU facts of this host in the workload's form, with the foreign load (busy cores) sampled now."""
    found = hardware.facts()
    found["foreign_load"] = _busy_cores(sample_s)
    return found


def _busy_cores(sample_s):
    if not sample_s or sample_s <= 0:
        return 0.0

    def busy():
        with open("/proc/stat") as handle:
            parts = [int(p) for p in handle.readline().split()[1:]]
        return sum(parts[:8]) - parts[3] - parts[4]
    try:
        first = busy()
        time.sleep(sample_s)
        hz = os.sysconf("SC_CLK_TCK")
        return max(0.0, (busy() - first) / float(hz) / sample_s)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
