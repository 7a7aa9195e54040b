"""Paths: nothing is written outside output_dir. Hostile documents: rejected fast, with bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from robustkit import ROOT, SCHEDULERS, record

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, files, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, OutputError
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import spec as recipe_spec

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
NAMES = ["../x", "../../etc/cron.d/x", "/etc/passwd", "/tmp/x", "a/b", "..", ".", "", ".hidden", "x/../../y",
         "x\n", "x\x00y", "~/x", "$HOME", "x" * 300, "-rf", "a b", "\u2028x", "..%2fx", "x/", "C:\\x"]


def tree(folder):
    out = {}
    for here, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(here, name)
            out[path] = os.lstat(path).st_mtime_ns
    return out


def doc(job_name, scheduler="slurm"):
    return {"job": {"job_options": {"job_name": job_name}, "application": {"executable": "./a"},
                    "target": {"job_scheduler_type": scheduler}}}


def write_like_the_module(document, output_dir):
    result = pipeline.optimise(document, CATALOG)
    files.ensure_dir(output_dir)
    path = files.target_path(output_dir, result.script.filename)
    files.write_atomic(path, result.script.text)
    return path


def test_nothing_is_written_outside_output_dir(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.sbatch").write_text("keep")
    attempts = outside_writes = 0
    before = {p: m for p, m in tree(str(tmp_path)).items() if not p.startswith(str(out) + os.sep)}
    for name in NAMES:
        for scheduler in SCHEDULERS:
            attempts += 1
            with pytest.raises(DslInvalid) as info:
                write_like_the_module(doc(name, scheduler), str(out))
            assert any(p.path == "job.job_options.job_name" for p in info.value.problems)
        attempts += 1
        with pytest.raises(OutputError):
            files.target_path(str(out), name)
    # symbolic links planted in the output directory: for the script itself and as a directory
    planted = [("job.sbatch", str(outside / "keep.sbatch")), ("Singularity.def", str(outside / "keep.sbatch")),
               ("Dockerfile", str(outside / "nothere"))]
    for link, target in planted:
        os.symlink(target, str(out / link))
    for scheduler in ("slurm",):
        attempts += 1
        with pytest.raises(OutputError, match="symbolic link"):
            write_like_the_module(doc("job", scheduler), str(out))
    ai = dsl.load_file(os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml"))
    attempts += 1
    # the recipes are placed by files.place: a link at a recipe's path is replaced, never followed
    generate.write(recipe_spec.spec_of(dsl.parse(ai)), str(out))
    assert not os.path.islink(str(out / "Singularity.def")) and not os.path.islink(str(out / "Dockerfile"))
    # a directory component that is a link: the name never holds a '/', so no write can go through it
    os.symlink(str(outside), str(out / "sub"))
    for name in ("sub/job.sbatch", "sub/../x", "sub"):
        attempts += 1
        with pytest.raises(OutputError):
            files.target_path(str(out), name)
    after = {p: m for p, m in tree(str(tmp_path)).items() if not p.startswith(str(out) + os.sep)}
    outside_writes = len(set(after.items()) ^ set(before.items()))
    assert (outside / "keep.sbatch").read_text() == "keep" and not (outside / "nothere").exists()
    record("paths", attempts=attempts, outside_writes=outside_writes)
    assert outside_writes == 0


def test_a_link_swapped_in_after_the_check_is_replaced_not_followed(tmp_path):
    """write_atomic renames over the path: a link planted between check and write is replaced, its target kept."""
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    path = files.target_path(str(out), "job.sbatch")
    os.symlink(str(victim), path)
    files.write_atomic(path, "#!/bin/bash\n")
    assert victim.read_text() == "keep" and not os.path.islink(path)
    assert (out / "job.sbatch").read_text() == "#!/bin/bash\n"
    record("paths", attempts=1, outside_writes=int(victim.read_text() != "keep"))


# ---------------------------------------------------------------- hostile documents

def alias_bomb(levels=9):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append("a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * 9)))
    return "\n".join(lines) + "\njob: *a%d\n" % (levels - 1)


HOSTILE_DOCUMENTS = {
    "yaml-alias-bomb": alias_bomb(),
    "yaml-merge-bomb": "a: &a {x: 1}\nb: {<<: *a}\njob: {application: {executable: x}}\n",
    "yaml-deep-flow": "job: " + "[" * 50000 + "]" * 50000 + "\n",
    "yaml-deep-block": "".join("%s- \n" % ("  " * i) for i in range(2000)),
    "json-deep": "{\"job\": " + "[" * 200000 + "]" * 200000 + "}",
    "json-deep-objects": "{\"a\":" * 100000 + "1" + "}" * 100000,
    "yaml-many-nodes": "job:\n" + "".join("  k%d: %d\n" % (i, i) for i in range(30000)),
    "json-huge": "{\"job\": {\"application\": {\"executable\": \"" + "A" * (2 * 1024 * 1024) + "\"}}}",
    "yaml-huge": "job:\n  application:\n    executable: " + "B" * (3 * 1024 * 1024) + "\n",
    "yaml-python-tag": "job: !!python/object/apply:os.system ['touch /tmp/modak-canary']\n",
    "yaml-long-string-near-limit": "job:\n  application:\n    executable: \"" + "x" * (1024 * 1024 - 64) + "\"\n",
}

PROBE = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
catalog = ImageCatalog.from_file(sys.argv[3])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
start = time.perf_counter()
outcome = "accepted"
try:
    pipeline.optimise(dsl.load_file(sys.argv[2]), catalog)
except ModakError as exc:
    outcome = "rejected: " + str(exc).splitlines()[-1][:200]
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": seconds, "traced_peak": peak, "rss_kib": rss, "base_kib": base}))
"""


@pytest.mark.parametrize("name", sorted(HOSTILE_DOCUMENTS))
def test_hostile_document_is_refused_fast_with_bounded_memory(name, tmp_path):
    path = tmp_path / ("doc.json" if name.startswith("json") else "doc.yaml")
    path.write_text(HOSTILE_DOCUMENTS[name])
    proc = subprocess.run([sys.executable, "-c", PROBE, os.path.join(ROOT, "collections"), str(path),
                           os.path.join(ROOT, "catalog", "images.yaml")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.splitlines()[-1])
    ok = (figures["outcome"].startswith("rejected") and figures["seconds"] < 2.0
          and figures["traced_peak"] < 64 * 1024 * 1024 and figures["rss_kib"] - figures["base_kib"] < 128 * 1024)
    record("documents", hostile=1, refused_fast=int(ok), max_traced_peak_kib=figures["traced_peak"] // 1024,
           max_seconds_ms=int(figures["seconds"] * 1000))
    assert figures["outcome"].startswith("rejected"), figures
    assert figures["seconds"] < 2.0, figures
    assert figures["traced_peak"] < 64 * 1024 * 1024, figures            # Python allocations while loading
    assert figures["rss_kib"] - figures["base_kib"] < 128 * 1024, figures  # the process grew by < 128 MiB
    assert not os.path.exists("/tmp/modak-canary")


# ---------------------------------------------------------------- hostile catalogs

CATALOG_PROBE = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
start = time.perf_counter()
outcome = "accepted"
try:
    ImageCatalog.from_file(sys.argv[2])
except ModakError as exc:
    outcome = "rejected: " + str(exc).splitlines()[-1][:200]
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": seconds, "traced_peak": peak, "rss_kib": rss, "base_kib": base}))
"""
CATALOG_ENTRY = "  - {name: a, uri: 'docker://example.org/a:1', framework: pytorch, version: '2.5.1', build: official}\n"
HOSTILE_CATALOGS = dict(
    ((name, text.replace("job:", "images:")) for name, text in HOSTILE_DOCUMENTS.items()
     # 30,000 elements and 1 MiB strings are within a catalog's limits (a catalog of 10,000 images is larger)
     if not name.startswith("json") and "long-string" not in name and "many-nodes" not in name),
    **{"catalog-alias-bomb-391-bytes": alias_bomb().replace("job:", "images:"),
       "catalog-key-twice": "images:\n  - name: a\n    uri: docker://example.org/a:1\n    uri: docker://evil.example/a:1\n"
                            "    framework: pytorch\n    version: '2.5.1'\n    build: official\n",
       "catalog-json-key-twice": '{"images": [], "images": [{"name": "x"}]}',
       "catalog-4MiB": "images:\n" + CATALOG_ENTRY + "#" + "x" * (4 * 1024 * 1024) + "\n"})


@pytest.mark.parametrize("name", sorted(HOSTILE_CATALOGS))
def test_hostile_catalog_is_refused_fast_with_bounded_memory(name, tmp_path):
    """Catalog files go through the DSL's strict loader with their own limits (issue 19.4)."""
    path = tmp_path / ("catalog.json" if "json" in name else "catalog.yaml")
    path.write_text(HOSTILE_CATALOGS[name])
    proc = subprocess.run([sys.executable, "-c", CATALOG_PROBE, os.path.join(ROOT, "collections"), str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.splitlines()[-1])
    ok = (figures["outcome"].startswith("rejected") and figures["seconds"] < 2.0
          and figures["traced_peak"] < 64 * 1024 * 1024 and figures["rss_kib"] - figures["base_kib"] < 128 * 1024)
    record("documents", hostile_catalogs=1, catalogs_refused_fast=int(ok),
           max_catalog_ms=int(figures["seconds"] * 1000))
    assert ok, (name, figures)
    assert not os.path.exists("/tmp/modak-canary")


def test_a_fifo_as_dsl_file_is_refused_at_once(tmp_path):
    """Reading a FIFO blocks until a writer comes: a DSL file that is not a regular file is refused (19.12)."""
    fifo = tmp_path / "dsl.yaml"
    os.mkfifo(str(fifo))
    probe = ("import sys; sys.path.insert(0, sys.argv[1])\n"
             "from ansible_collections.sodalite.modak.plugins.module_utils import dsl\n"
             "from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid\n"
             "try:\n    dsl.load_file(sys.argv[2])\nexcept DslInvalid as exc:\n    print(exc.problems[0].message)\n")
    proc = subprocess.run([sys.executable, "-c", probe, os.path.join(ROOT, "collections"), str(fifo)],
                          capture_output=True, text=True, timeout=30, check=False)
    record("documents", hostile=1, refused_fast=int("regular file" in proc.stdout))
    assert "regular file" in proc.stdout, proc
