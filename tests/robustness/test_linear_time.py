"""Validation runs in linear time: 1 MiB strings in every string field are refused fast, with their path, and
values at each field's own length bound are judged fast too (no pattern backtracks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from robustkit import HERE, ROOT, record

MIB = 1024 * 1024
LIMIT_S = 2.0          # per document, on a loaded machine too; the former version pattern took hours on 1 MiB


def probe(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.path.join(ROOT, "collections")]))
    try:
        proc = subprocess.run([sys.executable, os.path.join(HERE, "linear_probe.py")] + [str(a) for a in args],
                              capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        done = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        last = [json.loads(line)["field"] for line in done.splitlines() if line.startswith("{")]
        pytest.fail("validation did not finish in %d s; last field done: %s" % (timeout, last[-1:] or "none"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("mode", ["1MiB", "at_bound"])
def test_every_string_field_is_validated_in_linear_time(mode):
    rows = probe(MIB, "max") if mode == "at_bound" else probe(MIB)
    slow = [(r["field"], r["kind"], round(r["seconds"], 2)) for r in rows if r["seconds"] > LIMIT_S]
    wrong = [(r["field"], r["kind"]) for r in rows if r["misattributed"]]
    record("linear", **{"fields_" + mode: len(rows), "checked_" + mode: sum(1 for r in rows if r["checked"]),
                        "inputs_" + mode: sum(r["inputs"] for r in rows),
                        "slow": len(slow), "misattributed": len(wrong),
                        "max_ms_" + mode: int(1000 * max(r["seconds"] for r in rows))})
    assert len(rows) >= 60 and sum(1 for r in rows if r["checked"]) >= 60
    assert not slow, slow
    assert not wrong, wrong
