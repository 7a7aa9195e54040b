"""Faults: scheduler down or missing, registry down, corrupt catalog, corrupt results store, missing container
runtime. Each gives a clear error (one that names what failed) and loses nothing."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3

import pytest
from robustkit import ROOT, install_stubs, record, run_script

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline, oci_catalog
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import CatalogError
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run
from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError

SCRIPT = "#!/bin/bash\n#SBATCH --job-name=f\n#SBATCH --nodes=1\nsrun ./a\n"


def digest_tree(folder):
    out = {}
    for here, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(here, name)
            with open(path, "rb") as handle:
                out[path] = hashlib.sha256(handle.read()).hexdigest()
    return out


def fault(name, check, tally):
    tally.append(name)
    check()


def _fake_bin(tmp_path, name, body):
    folder = tmp_path / ("bin-%s-%s" % (name, hashlib.sha256(body.encode()).hexdigest()[:8]))
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(folder)


@pytest.fixture
def job_dir(tmp_path):
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "f.sbatch").write_text(SCRIPT)
    return folder


def _submit(job_dir, monkeypatch, path, **extra):
    monkeypatch.setenv("PATH", path)
    before = digest_tree(str(job_dir))
    with pytest.raises(SubmitError) as info:
        run(Request(script=str(job_dir / "f.sbatch"), scheduler=extra.pop("scheduler", "slurm"), **extra))
    after = digest_tree(str(job_dir))
    lost = [p for p, h in before.items() if after.get(p) != h]
    return str(info.value), lost


def test_scheduler_faults(job_dir, tmp_path, monkeypatch):
    handled, lost_total, tried = 0, 0, 0
    cases = [
        ("sbatch missing", str(tmp_path / "empty"), {}, ("installed", "PATH")),
        ("qsub missing", str(tmp_path / "empty"), {"scheduler": "torque"}, ("installed", "PATH")),
        ("slurmctld down", _fake_bin(tmp_path, "sbatch", "echo 'sbatch: error: Batch job submission failed: "
                                     "Unable to contact slurm controller (connect failure)' >&2\nexit 1\n")
         + ":" + _fake_bin(tmp_path, "squeue", "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2\n"
                           "exit 1\n"),
         {}, ("slurm controller",)),
        ("scheduler hangs", _fake_bin(tmp_path, "sbatch", "exec sleep 30\n") + ":" +
         _fake_bin(tmp_path, "squeue", "exec sleep 30\n"), {"command_timeout": 1}, ("did not answer",)),
        ("sbatch prints garbage", _fake_bin(tmp_path, "sbatch", "echo '<html>proxy error</html>'\n") + ":" +
         _fake_bin(tmp_path, "squeue", "exit 0\n"), {}, ("sbatch",)),
    ]
    for name, path, extra, words in cases:
        tried += 1
        path = path if name.endswith("missing") else path + ":/usr/bin:/bin"
        message, lost = _submit(job_dir, monkeypatch, path, **extra)
        ok = all(w in message for w in words)
        handled += int(ok)
        lost_total += len(lost)
        assert ok, (name, message)
        assert not lost, (name, lost)
    record("faults", tried=tried, handled=handled, lost=lost_total)


def _closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_registry_down_falls_back_with_a_warning():
    fallback = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml")).images
    images, warnings = oci_catalog.load("http://127.0.0.1:%d" % _closed_port(), timeout=2.0,
                                        fallback=fallback)
    ok = list(images) == list(fallback) and any("was not read" in w for w in warnings)
    images2, warnings2 = oci_catalog.load("http://127.0.0.1:%d" % _closed_port(), timeout=2.0)
    ok = bool(ok and images2 == [] and warnings2)
    record("faults", tried=1, handled=int(ok), lost=0)
    assert ok, warnings


CORRUPT_CATALOGS = {
    "not yaml": "images: [\n  - {name: x\n",
    "binary": b"\x00\xff\xfe garbage \x89PNG",
    "wrong shape": "images: 42\n",
    "entry missing fields": "images:\n  - {name: x}\n",
    "empty": "",
    "alias bomb": "a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nimages: [*b,*b,*b,*b,*b,*b,*b,*b]\n",
}


@pytest.mark.parametrize("name", sorted(CORRUPT_CATALOGS))
def test_corrupt_catalog_is_a_clear_error(name, tmp_path):
    path = tmp_path / "catalog.yaml"
    data = CORRUPT_CATALOGS[name]
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    before = path.read_bytes()
    with pytest.raises(CatalogError) as info:
        ImageCatalog.from_file(str(path))
    ok = str(path) in str(info.value) or "catalog" in str(info.value)
    record("faults", tried=1, handled=int(ok), lost=int(path.read_bytes() != before))
    assert ok and path.read_bytes() == before


CORRUPT_STORES = {
    "results.sqlite": b"SQLite format 3\x00" + b"\x00\xff" * 600,
    "garbage.db": b"this is not a database at all\n" * 50,
    "results.jsonl": b'{"config": {"threads": 1}}\n{"config": \n',
    "wrong.json": b'"a string, not records"',
    "binary.jsonl": b"\xff\xfe\x00\x00",
}


@pytest.mark.parametrize("name", sorted(CORRUPT_STORES))
def test_corrupt_results_store_is_a_clear_error_and_kept(name, tmp_path):
    path = tmp_path / name
    path.write_bytes(CORRUPT_STORES[name])
    before = digest_tree(str(tmp_path))
    with pytest.raises(store.StoreError) as info:
        store.load(str(path))
    if not name.endswith((".jsonl", ".json")):
        with pytest.raises(store.StoreError):
            store.append(str(path), [{"config": {"threads": 1}, "timing": {"per_sample_s": 0.1}}])
    kept = digest_tree(str(tmp_path)) == before or path.read_bytes() == CORRUPT_STORES[name]
    ok = str(path) in str(info.value)
    record("faults", tried=1, handled=int(ok), lost=int(not kept))
    assert ok and kept, str(info.value)
    assert isinstance(info.value, ValueError)   # the perf_model module reports ValueError with fail_json


def test_store_that_is_a_directory_or_locked(tmp_path):
    folder = tmp_path / "dir.sqlite"
    folder.mkdir()
    with pytest.raises((store.StoreError, OSError, sqlite3.Error)):
        store.append(str(folder), [{"config": {"threads": 1}, "timing": {"per_sample_s": 0.1}}])
    record("faults", tried=1, handled=1, lost=0)


def test_missing_container_runtime_keeps_the_previous_image(tmp_path):
    """The job script pulls into a temporary name: without apptainer the run fails loudly, the image stays."""
    catalog = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
    doc = {"job": {"application": {"executable": "./a", "container_runtime": "docker://r.example.org/x:1"},
                   "job_options": {"standard_output_file": "job.out"},
                   "target": {"job_scheduler_type": "local", "image_fetch": "job"}}}   # the job pulls its image
    text = pipeline.optimise(doc, catalog).script.text
    bin_dir, log = install_stubs(str(tmp_path / "stubs"))
    os.remove(os.path.join(bin_dir, "apptainer"))
    work = tmp_path / "run"
    (work / "images").mkdir(parents=True)
    script = work / "job.sh"
    script.write_text(text)
    proc = run_script(str(script), bin_dir, log, str(work))
    output = (work / "job.out").read_text()
    ok = proc.returncode == 127 and "apptainer: command not found" in output
    # with an image already pulled, a missing runtime still fails, and the image is untouched
    image = work / "images" / "x_1.sif"
    image.write_text("previous image")
    proc2 = run_script(str(script), bin_dir, log, str(work))
    ok = ok and proc2.returncode == 127 and image.read_text() == "previous image"
    leftovers = [n for n in os.listdir(str(work / "images")) if ".part." in n]
    record("faults", tried=2, handled=2 * int(ok), lost=int(image.read_text() != "previous image") + len(leftovers))
    assert ok, output
    assert not leftovers
