# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU benchmark's bare arms on a node with many cores (a GPU node's CPUs): threads, the allocator and bf16, each
apart against the framework default (threads = all cores, fp32, glibc malloc), with an A/A control.

    python3 benchmarks/gpu/cpu_arms.py --out DIR            # about 2 minutes on 16 cores
    python3 benchmarks/gpu/cpu_arms.py --smoke --out DIR    # seconds

Each run is a fresh process of benchmarks/workload/mnist_cnn.py (runner.run_one); every round runs every arm once
in a fresh shuffled order; a ratio is the geometric mean over rounds of the default's time per sample over the
arm's in the same round, with a 90 % interval (run.paired). The allocator arm preloads jemalloc where the node has it;
the bf16 arm says whether the CPU has AMX. Writes DIR/cpu-arms.json.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import runner  # noqa: E402
from run import atomic_json, paired  # noqa: E402

from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware, store  # noqa: E402

JEMALLOC = ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib64/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2")


def arms(cores, jemalloc):
    """(label, config, run prefix): the default and one change each."""
    base = {"threads": cores, "batch_size": 64, "precision": "fp32"}
    out = [("default", base, ()), ("A/A control", base, ())]
    for threads in sorted(set([max(1, cores // 2), max(1, cores // 4)]) - {cores}):
        out.append(("threads=%d" % threads, dict(base, threads=threads), ()))
    out.append(("bf16", dict(base, precision="bf16"), ()))
    if jemalloc:
        out.append(("jemalloc", base, ("env", "LD_PRELOAD=%s" % jemalloc)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true", help="1 step per run, 2 rounds")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    host = hardware.facts(gpus=[])
    jemalloc = next((path for pattern in JEMALLOC for path in glob.glob(pattern)), None)
    rounds, steps = (2, 1) if args.smoke else (args.rounds, args.steps)
    plan = arms(int(host["usable_cores"]), jemalloc)
    times = dict((label, []) for label, _config, _prefix in plan)
    errors = []
    rng = random.Random(args.seed)
    for round_ in range(rounds):
        order = list(plan)
        rng.shuffle(order)
        for label, config, prefix in order:
            began = time.monotonic()
            record = runner.run_one(store.normalise_config(config), steps=steps, warmup=2, run_prefix=prefix)
            if not record.get("ok", True) or "timing" not in record:
                errors.append({"arm": label, "error": record.get("error", "")[-500:]})
                times[label].append(float("nan"))
            else:
                times[label].append(float(record["timing"]["per_sample_s"]))
            sys.stdout.write("round %d %-14s %.3g s/sample, the run took %.1f s\n"
                             % (round_, label, times[label][-1], time.monotonic() - began))
            sys.stdout.flush()
        write(args.out, host, jemalloc, round_ + 1, steps, errors, plan, times)   # what a cut-off run keeps
    result = write(args.out, host, jemalloc, rounds, steps, errors, plan, times)
    for row in result["arms"]:
        ratio = row["vs_default"]
        sys.stdout.write("%-14s %s\n" % (row["label"], "%.3fx (%s-%s)" % (
            ratio["speedup"], "%.3f" % ratio["low"] if ratio["low"] else "-",
            "%.3f" % ratio["high"] if ratio["high"] else "-") if ratio["speedup"] else "-"))
    return 1 if errors else 0


def write(out, host, jemalloc, rounds, steps, errors, plan, times):
    result = {"host": host, "hw_class": store.hardware_class(host), "amx_bf16": "amx_bf16" in host["flags"],
              "jemalloc": jemalloc, "rounds": rounds, "steps": steps, "errors": errors, "arms": []}
    for label, config, prefix in plan:
        result["arms"].append({"label": label, "config": store.normalise_config(config), "run_prefix": list(prefix),
                               "per_sample_s": times[label], "vs_default": paired(times["default"], times[label])})
    atomic_json(os.path.join(out, "cpu-arms.json"), result)
    return result


if __name__ == "__main__":
    sys.exit(main())
