# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline model check on recorded runs: LOCO error of modak's model and of the linear baseline, and the noise.

  .venv/bin/python benchmarks/loco.py benchmarks/results/tuning.sqlite [more stores or .jsonl] [--phase grid]

Stores are pooled; the largest hardware class is used. The spread is the pooled within-configuration sd of
log(time per sample), foreign load included (how much runs of one configuration differ).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, stats, store  # noqa: E402


def spread(records):
    """(pooled within-configuration sd of log time, median runs per configuration)."""
    squares, dof, sizes = 0.0, 0, []
    for rows in predictor.by_config(records).values():
        logs = [math.log(r["timing"]["per_sample_s"]) for r in rows]
        sizes.append(len(logs))
        if len(logs) > 1:
            mean = sum(logs) / len(logs)
            squares += sum((v - mean) ** 2 for v in logs)
            dof += len(logs) - 1
    return (math.sqrt(squares / dof) if dof else None), stats.median(sizes)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("stores", nargs="+")
    p.add_argument("--phase", default=None, help="only records of this phase (grid, autotune, final)")
    args = p.parse_args(argv)
    records = []
    for path in args.stores:
        records.extend(r for r in store.load(path) if store.valid(r)
                       and (args.phase is None or r.get("phase") == args.phase))
    found = store.classes(records)
    hw_class = max(found, key=found.get)
    own = [r for r in records if store.hardware_class(r.get("hardware")) == hw_class]
    loads = sorted(store.foreign_load(r) for r in own)
    loglinear = predictor.loco(own, "loglinear", hw_class)
    linear = predictor.loco(own, "linear", hw_class)
    sd, n = spread(own)
    print(json.dumps({"hw_class": hw_class, "runs": len(own), "configs": loglinear["n_configs"],
                      "foreign_load_median": stats.median(loads), "foreign_load_min": loads[0],
                      "foreign_load_max": loads[-1],
                      "loco_median_error": loglinear["median"], "loco_mean_error": loglinear["mean"],
                      "baseline_linear_loco_median_error": linear["median"],
                      "within_config_sd_log": sd, "runs_per_config": n}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
