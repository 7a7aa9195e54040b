# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run benchmark configurations of the MNIST-CNN workload and append the records to a results store.

Each configuration runs in a fresh process (thread and oneDNN settings apply cleanly). Repetitions run
in rounds; each round visits every configuration once in a freshly shuffled order, so drifting foreign
load spreads over all configurations.

  runner.py --store results.sqlite --configs '[{"threads": 1}, {"threads": 2, "precision": "bf16"}]' --reps 3
  runner.py --store results.sqlite --configs-file plan.json --array-job job.sbatch --scheduler slurm
                                                          # write a job array (any scheduler with arrays)
  runner.py --store results.sqlite --configs-file plan.json --index 3              # run one position of the plan
  runner.py ... --run-prefix '["ch-run", "--set-env", "-b", "/w:/mnt", "-c", "/mnt", "IMG", "--"]' \
            --image docker://host/ns/img:tag --python python3 --workload /mnt/mnist_cnn.py  # inside the job's image

With --run-prefix the runs go through the command the job runs under (a container's run command), with
--python and --workload as seen there; --image names that image in every record (``context.image``), and
modak's optimise counts only runs measured in the image it chooses.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOAD = os.path.join(HERE, "workload", "mnist_cnn.py")
TORCH_PIN = "torch==2.13.0"
# a checkout: collections/ansible_collections/sodalite/modak links back to ROOT; an installed collection:
# ROOT is <path>/ansible_collections/sodalite/modak
sys.path.insert(0, os.path.join(ROOT, "collections") if os.path.isdir(os.path.join(ROOT, "collections"))
                else os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))

from ansible_collections.sodalite.modak.plugins.module_utils import files, jobspec  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store  # noqa: E402


def ensure_torch(python=sys.executable, install=False):
    """Check that torch imports in ``python``; install the pinned CPU torch only when asked (``install``)."""
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode == 0:
        return
    if not install:
        raise SystemExit("modak: torch is not installed for %s: install benchmarks/requirements-bench.txt (%s) "
                         "into it, or ask for it with --install-torch (the benchmark role's "
                         "benchmark_install_torch: true)" % (python, TORCH_PIN))
    sys.stderr.write("modak: installing %s (benchmarks/requirements-bench.txt)\n" % TORCH_PIN)
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r",
                    os.path.join(HERE, "requirements-bench.txt")], check=True)


def workload_argv(config, steps=8, warmup=2, tag="", python=sys.executable, data="synthetic", workload=WORKLOAD):
    config = store.normalise_config(config)
    argv = [python, workload, "--threads", str(config["threads"]), "--batch-size", str(config["batch_size"]),
            "--precision", config["precision"], "--onednn", "on" if config["onednn"] else "off",
            "--steps", str(steps), "--warmup", str(warmup), "--data", data]
    if config["compile"]:
        argv.append("--compile")
    if config["channels_last"]:
        argv.append("--channels-last")
    if config["cudnn_benchmark"]:
        argv.append("--cudnn-benchmark")
    if tag:
        argv.extend(["--tag", tag])
    return argv


def run_one(config, steps=8, warmup=2, tag="", python=sys.executable, timeout=900, run_prefix=(), image=None,
            workload=WORKLOAD):
    """Run the workload once (through ``run_prefix``, in ``image``); returns its record (ok False with the error
    when it failed)."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(store.normalise_config(config)["threads"])
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(tempfile.gettempdir(), "modak-inductor-cache"))
    proc = subprocess.run(list(run_prefix) + workload_argv(config, steps, warmup, tag, python, workload=workload),
                          capture_output=True, text=True, env=env, timeout=timeout, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"schema": "modak-bench/1", "workload": "mnist_cnn", "ok": False, "tag": tag,
                "config": store.normalise_config(config), "error": proc.stderr[-2000:]}
    record = json.loads(lines[-1])
    record["context"] = {"image": image or None, "run_prefix": list(run_prefix)}
    return record


def plan(configs, reps, seed=None):
    """Randomised interleaved order: reps rounds, each a fresh shuffle of all configurations."""
    rng = random.Random(seed)
    order = []
    for rep in range(reps):
        round_ = [(rep, store.normalise_config(c)) for c in configs]
        rng.shuffle(round_)
        order.extend(round_)
    return order


def run_plan(configs, reps, store_path=None, seed=None, steps=8, warmup=2, log=sys.stderr, **where):
    """Run the plan; ``where``: run_one's python, run_prefix, image and workload."""
    records = []
    for i, (rep, config) in enumerate(plan(configs, reps, seed)):
        record = run_one(config, steps, warmup, tag="rep%d" % rep, **where)
        records.append(record)
        if store_path and record.get("ok"):
            store.append(store_path, [record])
        if log:
            timing = record.get("timing") or {}
            log.write("[%d] %s rep %d: %s\n" % (i + 1, store.config_key(config), rep,
                                                "%.1f ms/step, load %.2f" % (1000 * timing["median_step_s"],
                                                                             store.foreign_load(record))
                                                if record.get("ok") else "FAILED"))
            log.flush()
    return records


def array_job_script(configs_file, reps, store_path, scheduler="slurm", steps=8, warmup=2, python=sys.executable,
                     job_name="modak-bench", exclusive=True):
    """A job array for ``scheduler``, written by its class as every job modak writes (jobspec.py): one element per
    (repetition, configuration), each on a node of its own unless not ``exclusive``, in the order of the plan shuffled with the array's id
    as seed (the same in every element)."""
    with open(configs_file) as handle:
        count = len(json.load(handle))
    spec = jobspec.JobSpec(
        name=job_name, purpose="benchmark array: element i runs position i of the shuffled plan",
        steps=((python, os.path.abspath(__file__), "--store", store_path, "--configs-file",
                os.path.abspath(configs_file), "--reps", str(reps), "--steps", str(steps), "--warmup", str(warmup),
                "--array-element"),), array_size=count * reps, exclusive=exclusive)
    return jobspec.render(spec, scheduler)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--store", required=True, help="results store (.sqlite, or .jsonl)")
    p.add_argument("--configs", help="JSON list of configurations")
    p.add_argument("--configs-file", help="file holding the JSON list of configurations")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--index", type=int, default=None, help="run only this position of the plan (array element)")
    p.add_argument("--array-job", metavar="SCRIPT", help="write a job array script instead of running")
    p.add_argument("--scheduler", default="slurm", help="the scheduler of --array-job (one with job arrays)")
    p.add_argument("--exclusive", action=argparse.BooleanOptionalAction, default=True,
                   help="each element of --array-job on a node of its own (the default: runs are timed)")
    p.add_argument("--array-element", action="store_true",
                   help="run the position MODAK_ARRAY_INDEX of the plan, seeded with MODAK_ARRAY_JOB (in an array)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.add_argument("--install-torch", action=argparse.BooleanOptionalAction, default=False,
                   help="pip-install the pinned torch (benchmarks/requirements-bench.txt) when it is missing")
    p.add_argument("--run-prefix", default="[]", help="JSON list: the command the runs go through (a container's)")
    p.add_argument("--image", default=None, help="the image the runs go through, stored with every record")
    p.add_argument("--python", default=sys.executable, help="interpreter of the runs (as seen through the prefix)")
    p.add_argument("--workload", default=WORKLOAD, help="path of the workload (as seen through the prefix)")
    args = p.parse_args(argv)
    prefix = json.loads(args.run_prefix)
    if not isinstance(prefix, list) or not all(isinstance(w, str) for w in prefix):
        p.error("--run-prefix must be a JSON list of strings")
    where = {"python": args.python, "run_prefix": prefix, "image": args.image, "workload": args.workload}
    if args.configs_file:
        with open(args.configs_file) as handle:
            configs = json.load(handle)
    else:
        configs = json.loads(args.configs or "[{}]")
    if args.array_job:
        if not args.configs_file:
            p.error("--array-job needs --configs-file")
        try:
            script, warnings = array_job_script(args.configs_file, args.reps, os.path.abspath(args.store),
                                                args.scheduler, args.steps, args.warmup,
                                                exclusive=args.exclusive)
        except (jobspec.JobSpecError, KeyError) as exc:
            p.error(str(exc).strip("'\""))
        # a fresh private file renamed over the path (a link there is replaced, never followed), as every job script
        files.write_atomic(os.path.abspath(args.array_job), script.text, 0o700)
        print(json.dumps({"changed": True, "script": args.array_job, "elements": len(configs) * args.reps,
                          "warnings": warnings}))
        return 0
    if args.array_element:
        try:
            args.index, args.seed = int(os.environ["MODAK_ARRAY_INDEX"]), int(os.environ["MODAK_ARRAY_JOB"])
        except (KeyError, ValueError) as exc:
            p.error("--array-element runs in an array element (MODAK_ARRAY_INDEX, MODAK_ARRAY_JOB): %s" % exc)
    if not prefix:
        ensure_torch(args.python, install=args.install_torch)
    if args.index is not None:
        rep, config = plan(configs, args.reps, args.seed)[args.index]
        record = run_one(config, args.steps, args.warmup, tag="rep%d" % rep, **where)
        if record.get("ok"):
            store.append(args.store, [record])
        records = [record]
    else:
        records = run_plan(configs, args.reps, args.store, args.seed, args.steps, args.warmup, **where)
    ok = [r for r in records if r.get("ok")]
    summary = {"changed": bool(ok), "runs": len(records), "stored": len(ok), "failed": len(records) - len(ok),
               "store": args.store}
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
