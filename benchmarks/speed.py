# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fast modak answers, side by side in one run:

* tasks: a playbook of N ``sodalite.modak.optimise`` tasks against the same playbook of N
  ``ansible.builtin.ping`` tasks (wall time, median of the repetitions; the ratio is what counts), run in
  interleaved rounds;
* decision: ``matcher.choose`` on a generated catalog of 10,000 images (p50 and p95 over many calls), and the
  time to load that catalog (``ImageCatalog.from_file``: read, checked against the catalog schema, turned into
  images), as JSON and as YAML (median of 3); one fresh process per copy and round, the copies interleaved, the
  median of the rounds reported.

The machine's load (1-minute load average) is recorded before and after, next to the figures.

  benchmarks/speed.py                                   # this checkout; prints a table, writes --json
  benchmarks/speed.py --baseline /tmp/old/collections   # also an older copy, side by side

A copy is named by a directory holding ``ansible_collections/sodalite/modak`` (a checkout's
``collections/``, or where ``ansible-galaxy collection install -p`` put it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DSL = os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml")
FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "jax", "keras")
ISAS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
BUILDS = ("official", "optimised-pip", "optimised-source")

# Runs inside the copy under test (its own interpreter, its own sys.path): prints the timings as JSON.
DECISION = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher
from ansible_collections.sodalite.modak.plugins.module_utils import catalog as catalog_module
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
def load_s(path):
    # median of 3 loads: read, checked, made images (from_data: from_file keeps what it read)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        loaded = ImageCatalog.from_data(catalog_module.read_data(path), path)
        times.append(time.perf_counter() - start)
    return sorted(times)[1], loaded
yaml_load_s, _catalog = load_s(sys.argv[2][:-len(".json")] + ".yaml")
load, catalog = load_s(sys.argv[2])
request = dsl.parse(dsl.load_file(sys.argv[3]))
calls = int(sys.argv[4])
times, cpu = [], []
for _ in range(calls):
    start, start_cpu = time.perf_counter(), time.thread_time()
    choice = matcher.choose(request, catalog)
    times.append(time.perf_counter() - start)
    cpu.append(time.thread_time() - start_cpu)
times.sort()
cpu.sort()
print(json.dumps({"catalog_load_s": load, "catalog_yaml_load_s": yaml_load_s,
                  "p50_ms": 1e3 * times[len(times) // 2], "p95_ms": 1e3 * times[int(len(times) * 0.95)],
                  "cpu_p50_ms": 1e3 * cpu[len(cpu) // 2],
                  "image": choice.image.name if choice.image else None, "explanation_lines": len(choice.explanation),
                  "rejected": len(choice.rejected)}))
"""


def generated_catalog(count):
    """``count`` images over five frameworks, three major versions, ISA levels, builds and GPUs."""
    images = []
    for i in range(count):
        entry = {"name": "img-%05d" % i, "uri": "docker://registry.example.org/modak/img:%05d" % i,
                 "framework": FRAMEWORKS[i % 5],
                 "version": "%d.%d.%d" % (1 + (i // 5) % 3, (i // 15) % 20, (i // 300) % 5),
                 "build": BUILDS[(i // 7) % 3], "isa": ISAS[(i // 11) % 3]}
        if i % 13 == 0:
            entry.update(accelerator="nvidia", cuda="12.%d" % (i % 4))
        if i % 17 == 0:
            entry["cpu_features"] = ["amx_bf16", "amx_tile"]
        images.append(entry)
    return {"images": images}


def decision(collections, catalog_file, calls):
    out = subprocess.run([sys.executable, "-c", DECISION, collections, catalog_file, DSL, str(calls)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def median_of_rounds(measured):
    """One decision result from several rounds: the median of each figure, and every round's p50 and loads."""
    out = dict(measured[0])
    for key in ("catalog_load_s", "catalog_yaml_load_s", "p50_ms", "p95_ms", "cpu_p50_ms"):
        out[key] = statistics.median(m[key] for m in measured)
    out["rounds"] = [{k: round(m[k], 4) for k in ("p50_ms", "catalog_load_s", "catalog_yaml_load_s")}
                     for m in measured]
    return out


def playbook(path, tasks, module):
    lines = ["- hosts: localhost", "  connection: local", "  gather_facts: false", "  tasks:"]
    for n in range(tasks):
        if module == "ping":
            lines += ["    - name: ping %d" % n, "      ansible.builtin.ping:"]
        else:
            lines += ["    - name: optimise %d" % n, "      sodalite.modak.optimise:",
                      "        dsl_file: %s" % DSL, "        output_dir: '{{ playbook_dir }}/out'"]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def ansible_run(collections, book, cwd, extra_env=None):
    """(wall seconds, CPU seconds of ansible-playbook and everything it ran) of one playbook run."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_LOCALHOST_WARNING="False",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="False", ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               **(extra_env or {}))
    env.pop("ANSIBLE_CONFIG", None)
    command = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([command, book], cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tasks(copies, count, reps, work):
    """Per copy: the ping playbook and the optimise playbook, run in rounds (every copy once per round, ping then
    optimise), so that a change of the machine's load falls on all copies alike; medians over the rounds, and the
    median of the ratios paired within a round."""
    ping, optimise = os.path.join(work, "ping.yml"), os.path.join(work, "optimise.yml")
    playbook(ping, count, "ping")
    playbook(optimise, count, "optimise")
    runs = dict((name, []) for name, _collections, _env in copies)
    for _rep in range(reps):
        for name, collections, extra_env in copies:
            runs[name].append((ansible_run(collections, ping, work), ansible_run(collections, optimise, work, extra_env)))
    result = {}
    for name, pairs in runs.items():
        ping_s = statistics.median(p[0] for p, _o in pairs)
        opt_s = statistics.median(o[0] for _p, o in pairs)
        result[name] = {
            "tasks": count, "ping_s": round(ping_s, 2), "optimise_s": round(opt_s, 2),
            "ratio": round(opt_s / ping_s, 2),
            "paired_ratio": round(statistics.median(o[0] / p[0] for p, o in pairs), 2),
            "cpu_ratio": round(statistics.median(o[1] / p[1] for p, o in pairs), 2),
            "optimise_per_task_s": round(opt_s / count, 3), "rounds": [[round(p[0], 2), round(o[0], 2)] for p, o in pairs]}
    return result


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform(),
            "load_1min": round(os.getloadavg()[0], 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--baseline", help="a directory holding ansible_collections/sodalite/modak to compare with")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", default=os.path.join(HERE, "results", "speed.json"))
    args = parser.parse_args()
    copies = [("this", os.path.join(ROOT, "collections"), {})]
    if args.baseline:
        copies.insert(0, ("baseline", os.path.abspath(args.baseline), {}))
    result = {"machine": machine(), "settings": vars(args), "copies": {}}
    with tempfile.TemporaryDirectory(prefix="modak-speed-") as work:
        catalog_file = os.path.join(work, "catalog.json")
        with open(catalog_file, "w", encoding="utf-8") as handle:
            json.dump(generated_catalog(args.images), handle)
        with open(os.path.join(work, "catalog.yaml"), "w", encoding="utf-8") as handle:
            yaml.safe_dump(generated_catalog(args.images), handle, sort_keys=False)
        rounds = dict((name, []) for name, _collections, _env in copies)
        for _rep in range(args.reps):        # interleaved too: a change of the machine falls on every copy alike
            for name, collections, _env in copies:
                rounds[name].append(decision(collections, catalog_file, args.calls))
        for name, measured in rounds.items():
            result["copies"][name] = {"decision": median_of_rounds(measured)}
        for name, measured in tasks(copies, args.tasks, args.reps, work).items():
            result["copies"][name]["tasks"] = measured
    result["machine"]["load_1min_after"] = round(os.getloadavg()[0], 2)
    result["settings"] = {k: v for k, v in result["settings"].items() if k not in ("json", "baseline")}
    print("| copy | %d optimise tasks | %d ping tasks | ratio | paired | CPU ratio | decision p50 (%d images) | p95 "
          "| CPU p50 | catalog load (JSON, YAML) | explanation lines |" % (args.tasks, args.tasks, args.images))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, data in result["copies"].items():
        t, d = data["tasks"], data["decision"]
        print("| %s | %.2f s | %.2f s | %.2fx | %.2fx | %.2fx | %.2f ms | %.2f ms | %.2f ms | %.3f s, %.3f s | %d |" % (
            name, t["optimise_s"], t["ping_s"], t["ratio"], t["paired_ratio"], t["cpu_ratio"], d["p50_ms"],
            d["p95_ms"], d["cpu_p50_ms"], d["catalog_load_s"], d["catalog_yaml_load_s"], d["explanation_lines"]))
    print("machine: %(cpu)s, %(cpus)s CPUs, Python %(python)s, load %(load_1min)s before, %(load_1min_after)s after"
          % result["machine"])
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
