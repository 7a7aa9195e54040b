"""Atomicity and concurrency: SIGKILL during writes leaves the previous script whole; 16 concurrent runs into
one output directory give 16 complete scripts; the results store keeps every record of concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time

from robustkit import ROOT, record

from ansible_collections.sodalite.modak.plugins.module_utils import files, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store

KILLS = 60
RUNS = 16


def _doc(name, hours=1):
    return {"job": {"job_options": {"job_name": name, "wall_time_limit": "%d:00:00" % hours},
                    "application": {"executable": "./a", "arguments": ["--run", name]},
                    "target": {"job_scheduler_type": "slurm"}}}


def _writer_loop(out, docs, catalog, ready):
    """The optimiser writing in a loop (a forked child, killed by the test)."""
    os.write(ready, b"r")
    i = 0
    while True:
        result = pipeline.optimise(docs[i % 2], catalog)
        files.write_atomic(files.target_path(out, result.script.filename), result.script.text)
        i += 1


def test_sigkill_during_writes_never_leaves_a_partial_script(tmp_path):
    catalog = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
    docs = [{"job": {"job_options": {"job_name": "loop", "wall_time_limit": "%d:00:00" % hours},
                     "application": {"executable": "./a", "arguments": ["x" * 4000] * 100},
                     "target": {"job_scheduler_type": "slurm"}}} for hours in (1, 2)]
    complete = set(pipeline.optimise(doc, catalog).script.text for doc in docs)
    out = tmp_path / "out"
    out.mkdir()
    script = out / "loop.sbatch"
    rng = random.Random(7)
    partial = 0
    for _kill in range(KILLS):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                os.close(read_end)
                _writer_loop(str(out), docs, catalog, write_end)
            finally:
                os._exit(1)  # pylint: disable=protected-access
        os.close(write_end)
        os.read(read_end, 1)
        os.close(read_end)
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if script.exists() and script.read_text() not in complete:
            partial += 1
    leftovers = [n for n in os.listdir(str(out)) if n.startswith(".modak-")]
    record("atomicity", kills=KILLS, partial_scripts=partial, temp_files_left=len(leftovers))
    assert script.exists() and partial == 0
    assert sorted(set(os.listdir(str(out))) - set(leftovers)) == ["loop.sbatch"]


def _one_run(args):
    output_dir, name, hours = args
    catalog = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
    result = pipeline.optimise(_doc(name, hours), catalog)
    files.ensure_dir(output_dir)
    path = files.target_path(output_dir, result.script.filename)
    files.write_atomic(path, result.script.text)
    return path, result.script.text


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def test_sixteen_concurrent_runs_into_one_directory(tmp_path):
    out = str(tmp_path / "out")          # created by the runs themselves, concurrently
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(RUNS) as pool:
        distinct = pool.map(_one_run, [(out, "job%02d" % i, 1) for i in range(RUNS)])
        same = pool.map(_one_run, [(out, "shared", 1 + i % 5) for i in range(RUNS)])
    lost = sum(1 for path, text in distinct if not os.path.exists(path) or _read(path) != text)
    shared = _read(os.path.join(out, "shared.sbatch"))
    lost += int(shared not in set(text for _p, text in same))
    names = sorted(os.listdir(out))
    lost += int(names != sorted(["job%02d.sbatch" % i for i in range(RUNS)] + ["shared.sbatch"]))
    record("concurrency", runs=2 * RUNS, lost_or_corrupt=lost)
    assert lost == 0, names


def _append(args):
    path, writer, count = args
    for i in range(count):
        store.append(path, [{"workload": "w", "config": {"threads": writer + 1, "batch_size": i + 1},
                             "hardware": {"model": "m", "arch": "x86_64", "cores": 2},
                             "timing": {"per_sample_s": 0.001 * (i + 1)}, "writer": writer, "i": i}])
    return count


def test_results_store_survives_concurrent_writers(tmp_path):
    path = str(tmp_path / "results.sqlite")
    writers, each = 16, 8
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(writers) as pool:
        written = sum(pool.map(_append, [(path, w, each) for w in range(writers)]))
    records = store.load(path)
    seen = set((r["writer"], r["i"]) for r in records)
    lost = written - len(seen) + (len(records) - len(seen))
    record("concurrency", store_writers=writers, store_records=written, store_lost=lost)
    assert written == writers * each and lost == 0
    assert json.dumps(records[0])  # readable records
