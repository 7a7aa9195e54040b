# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark results store: SQLite (WAL, one transaction per append) or JSON lines.

A record is what ``benchmarks/workload/mnist_cnn.py`` prints: ``config``, ``hardware``, ``versions``,
``timing`` and ``load``. Records are grouped by hardware class (CPU model, cores and the ISA flags
that change which kernels run) because a performance model only transfers within one class. A whole run of an
application as a job (``job_run``: elapsed seconds, nodes, partition; perf/runtime.py) is kept beside them, for
placement.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import time
from urllib.parse import quote

from ansible_collections.sodalite.modak.plugins.module_utils.errors import PerfError

from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware


class StoreError(PerfError):
    """The results store cannot be read or written (corrupt file, not a database); the file is left as it is."""


hardware_class = hardware.hardware_class  # the one definition, shared with the workload
KNOBS = ("threads", "batch_size", "precision", "channels_last", "compile", "onednn", "cudnn_benchmark")
BUSY_TIMEOUT_S = 60.0
JOB_RUN_KEY = "job_run"     # the configuration column of a job's run record (perf/runtime.py), which tunes no knob

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
        "cudnn_benchmark": bool(config.get("cudnn_benchmark", False)),
    }


def config_key(config):
    """'t16-b256-bf16-cl1-c0-dnn1' (and '-cudnnb1' when cuDNN autotuning is on, so that keys of runs stored before
    that knob existed still match)."""
    c = normalise_config(config)
    key = "t%d-b%d-%s-cl%d-c%d-dnn%d" % (c["threads"], c["batch_size"], c["precision"], c["channels_last"],
                                         c["compile"], c["onednn"])
    return key + "-cudnnb1" if c["cudnn_benchmark"] else key


# bounds of what a real run can report; anything outside (inf, nan, 1e999, negative times) is refused
LIMITS = {"threads": (1, 4096), "batch_size": (1, 1 << 20)}
MAX_PER_SAMPLE_S = 1e6
MAX_BUSY_CORES = 1e5
MAX_ELAPSED_S = 1e8        # a whole run: three years
MAX_NODES = 1 << 20
_SCRIPT_SUFFIX = re.compile(r"\.(py|sh|bash|R|jl|pl|rb|js)\Z")
_INTERPRETER = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|bash|sh|perl|Rscript|julia|ruby|node)\Z")


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def problems(record):
    """What makes a record unfit for a model (empty when none): wrong types, non-finite or absurd numbers."""
    if not isinstance(record, dict):
        return ["the record is not a JSON object"]
    found = []
    config = record.get("config")
    if not isinstance(config, dict):
        if not isinstance(record.get("job_run"), dict) or config is not None:   # a job's run tunes no knob
            found.append("config is not an object")
    else:
        for knob, (low, high) in LIMITS.items():
            value = config.get(knob)
            if value is not None and not (isinstance(value, int) and not isinstance(value, bool)
                                          and low <= value <= high):
                found.append("config.%s must be an integer from %d to %d, not %r" % (knob, low, high, value))
    for section, key, low, high in (("timing", "per_sample_s", 0.0, MAX_PER_SAMPLE_S),
                                    ("load", "other_busy_cores", 0.0, MAX_BUSY_CORES)):
        part = record.get(section)
        value = part.get(key) if isinstance(part, dict) else None
        if part is not None and not isinstance(part, dict):
            found.append("%s is not an object" % section)
        elif value is not None and not (_number(value) and low <= value <= high
                                        and (key != "per_sample_s" or value > 0)):
            found.append("%s.%s must be a finite number in [%g, %g], not %r" % (section, key, low, high, value))
    found.extend(job_run_problems(record.get("job_run")))
    for key in ("workload", "application"):
        if record.get(key) is not None and not (isinstance(record[key], str) and len(record[key]) <= 256):
            found.append("%s must be a string of at most 256 characters" % key)
    if record.get("hardware") is not None and not isinstance(record.get("hardware"), dict):
        found.append("hardware is not an object")
    return found


def job_run_problems(run):
    """What makes a record's ``job_run`` (a whole run of the application as a job: elapsed seconds, nodes,
    partition; see perf/runtime.py) unfit for the run-time model; empty when it has none."""
    if run is None:
        return []
    if not isinstance(run, dict):
        return ["job_run is not an object"]
    found = []
    elapsed, nodes, partition = run.get("elapsed_s"), run.get("nodes"), run.get("partition")
    if not (_number(elapsed) and 0 < elapsed <= MAX_ELAPSED_S):
        found.append("job_run.elapsed_s must be a finite number in (0, %g], not %r" % (MAX_ELAPSED_S, elapsed))
    if not (isinstance(nodes, int) and not isinstance(nodes, bool) and 1 <= nodes <= MAX_NODES):
        found.append("job_run.nodes must be an integer from 1 to %d, not %r" % (MAX_NODES, nodes))
    if partition is not None and not (isinstance(partition, str) and 0 < len(partition) <= 64):
        found.append("job_run.partition must be a string of at most 64 characters, not %r" % (partition,))
    return found


def valid(record):
    """Fit for a model: a good run with a time per sample and no problems (records stored before the checks
    existed are screened here, on the way out)."""
    timing = (record or {}).get("timing") if isinstance(record, dict) else None
    return isinstance(timing, dict) and bool(record.get("ok", True)) and _number(timing.get("per_sample_s")) \
        and not problems(record)


def foreign_load(record):
    value = ((record or {}).get("load") or {}).get("other_busy_cores")
    return float(value) if _number(value) and value >= 0 else 0.0


def workload_key(name):
    """'benchmarks/workload/mnist_cnn.py' and 'mnist_cnn' -> 'mnist_cnn'."""
    base = os.path.basename(str(name or "").strip())
    return _SCRIPT_SUFFIX.sub("", base)


def application_key(argv):
    """The application a DSL runs, as records name it: the program, or the script an interpreter runs."""
    words = [str(w) for w in argv or () if str(w)]
    if not words:
        return ""
    if _INTERPRETER.match(os.path.basename(words[0])):
        scripts = [w for w in words[1:] if not w.startswith("-")]
        if scripts:
            return workload_key(scripts[0])
    return workload_key(words[0])


def record_application(record):
    """The application a record measured: the key modak stored with it, else its own workload name."""
    named = record.get("application") if isinstance(record, dict) else None
    return workload_key(named if isinstance(named, str) and named else (record or {}).get("workload"))


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
    """Append records in one IMMEDIATE transaction; returns how many were stored.

    A record with problems (``problems``: inf, nan, absurd or mistyped values) is refused with StoreError
    before anything is written: one poisoned record must not break every later optimise."""
    rows = []
    for record in records:
        if not isinstance(record, dict) or not (isinstance(record.get("config"), dict)
                                                or isinstance(record.get("job_run"), dict)):
            continue
        found = problems(record)
        if found:
            raise StoreError("refusing to store a benchmark record: %s" % "; ".join(found))
        config = record.get("config")
        rows.append((record.get("workload", "unknown"), hardware_class(record.get("hardware")),
                     config_key(config) if isinstance(config, dict) else JOB_RUN_KEY,
                     (record.get("timing") or {}).get("per_sample_s"),
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
        # jiffies tick at 1/hz: over a short sample the count can overshoot; no machine is busier than its cores
        return min(float(os.cpu_count() or 1), max(0.0, (busy() - first) / float(hz) / sample_s))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
