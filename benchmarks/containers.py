# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The paper's container comparison, measured here: the same MNIST-CNN training side by side.

Arms (one fresh process per run, interleaved repetitions, each round a fresh shuffle):

  bare      the host's Python and torch, framework defaults (threads = all cores, batch 64, fp32, eager)
  official  an official-style image (Debian + python3 + the same torch wheel, nothing tuned), framework defaults
  modak     modak's image (container_recipe: jemalloc, OpenMP placement) with the settings modak chose for the
            DSL examples/pytorch-mnist-tuning-local.yaml after autotuning it on this machine first
            (playbooks/autotune.yml -> benchmarks/results/containers-autotune.sqlite: threads, batch, precision)

Both images run with Charliecloud (ch-run) and are built with ch-image on the mmdebstrap Debian base
(scripts/base-image) from the pinned torch 2.13.0 CPU wheel. The measure is seconds per training sample
(median step time / batch size) of the timed steps, so arms with different batch sizes compare by throughput.

  container_overhead   = median(official) / median(bare) - 1      (same settings; goal <= 0.03)
  speedup_vs_official  = median(official) / median(modak)         (goal >= 1.5)

Writes benchmarks/results/containers.json and containers.png.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "collections"))

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate  # noqa: E402

WORKLOAD_DIR = os.path.join(HERE, "workload")
HARDWARE = os.path.join(ROOT, "plugins", "module_utils", "perf", "hardware.py")
RESULTS = os.path.join(HERE, "results")
DSL = os.path.join(ROOT, "examples", "pytorch-mnist-tuning-local.yaml")
STORE = os.path.join(RESULTS, "containers-autotune.sqlite")
OFFICIAL = "localhost/modak-bench/official-pytorch:2.13.0"
OFFICIAL_DOCKERFILE = """# official-style PyTorch CPU image: Debian, Python, the torch wheel; no runtime tuning
FROM {base}
RUN apt-get update && \\
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates python3 python3-venv && \\
    rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"
COPY wheels /opt/wheels
RUN pip install --no-cache-dir --no-index --find-links /opt/wheels torch==2.13.0 && rm -rf /opt/wheels
CMD ["python3"]
"""
DEFAULT_ARGS = ["--batch-size", "64", "--precision", "fp32"]


def ch_env():
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "USER": os.environ.get("USER") or "root",
           "HOME": os.environ.get("HOME", "/root")}
    if os.environ.get("CH_IMAGE_STORAGE"):
        env["CH_IMAGE_STORAGE"] = os.environ["CH_IMAGE_STORAGE"]
    return env


def sh(argv, **kw):
    sys.stderr.write("+ %s\n" % " ".join(argv))
    return subprocess.run(argv, check=True, env=ch_env(), **kw)


def stage_workload(work):
    """The directory bound into the containers: the workload with perf/hardware.py beside it (inside a container
    the checkout around benchmarks/workload is not there, so the workload finds the module next to itself)."""
    dest = os.path.join(work, "workload")
    os.makedirs(dest, exist_ok=True)
    for source in (os.path.join(WORKLOAD_DIR, "mnist_cnn.py"), HARDWARE):
        shutil.copyfile(source, os.path.join(dest, os.path.basename(source)))
    return dest


def wheels_dir(work, find_links):
    dest = os.path.join(work, "wheels")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", dest,
                    "--find-links", find_links, "torch==2.13.0"], check=True)
    return dest


def build_images(work, base, find_links):
    """Build both images with ch-image (its build cache makes a second call quick); return their names."""
    wheels = wheels_dir(work, find_links)
    official_ctx = os.path.join(work, "official")
    os.makedirs(official_ctx, exist_ok=True)
    with open(os.path.join(official_ctx, "Dockerfile"), "w") as handle:
        handle.write(OFFICIAL_DOCKERFILE.format(base=base))
    if not os.path.isdir(os.path.join(official_ctx, "wheels")):
        shutil.copytree(wheels, os.path.join(official_ctx, "wheels"), copy_function=os.link)
    sh(["ch-image", "build", "--force", "-t", OFFICIAL, "-f", os.path.join(official_ctx, "Dockerfile"), official_ctx])
    modak_ctx = os.path.join(work, "modak")
    written = generate.write(pinned_dsl(), modak_ctx, ["docker"], base_image=base, wheels=wheels)
    modak = "localhost/modak/%s:%s" % (written["recipe_name"], written["recipe_sha256"][:12])
    sh(["ch-image", "build", "--force", "-t", modak, "-f", written["recipes"]["docker"], modak_ctx])
    return {"official": OFFICIAL, "modak": modak, "recipe_sha256": written["recipe_sha256"]}


def pinned_dsl():
    """The tuning DSL with the framework pinned to the wheel both images install."""
    doc = dsl.load_file(DSL)
    details = doc["job"]["optimisation"]["app_type-ai_training"]
    details.setdefault("ai_framework-pytorch", {})["version"] = "2.13.0"
    return doc


def autotune(store_path):
    """modak's autotuning of the DSL on this machine (playbooks/autotune.yml): records of this hardware class."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                           os.path.join(ROOT, "playbooks", "autotune.yml"), "-e",
                           json.dumps({"dsl_file": DSL, "results_store": store_path,
                                       "output_dir": os.path.join(os.path.dirname(store_path), "autotune-out")})],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError("autotuning failed: %s" % (proc.stdout[-3000:] + proc.stderr[-2000:]))


def modak_settings():
    """What modak writes into the job script for the DSL, from the recorded benchmarks of this machine."""
    catalog_images = []
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    catalog = ImageCatalog(catalog_images, source="none")
    records = store.load(STORE)
    result = pipeline.optimise(pinned_dsl(), catalog, records, store.local_hardware())
    env = list(result.settings.env)
    return {"env": env, "args": list(result.settings.extra_args), "threads": result.settings.threads,
            "prediction": (result.extra or {}).get("prediction")}


def workload_argv(python, args, steps, warmup, tag):
    return [python, "mnist_cnn.py", "--steps", str(steps), "--warmup", str(warmup), "--data", "synthetic",
            "--tag", tag] + args


def run_arm(arm, plan, steps, warmup, tag):
    if arm == "bare":
        env = dict(ch_env(), **dict(plan["bare_env"]))
        argv = workload_argv(sys.executable, DEFAULT_ARGS, steps, warmup, tag)
        cwd = WORKLOAD_DIR
    else:
        image = plan["images"][arm]
        env_pairs = plan["modak"]["env"] if arm == "modak" else []
        args = plan["modak"]["args"] if arm == "modak" else DEFAULT_ARGS
        argv = (["ch-run", "--set-env"] + ["--set-env=%s=%s" % kv for kv in env_pairs]
                + ["-b", "%s:/mnt" % plan["workload"], "-c", "/mnt", image, "--"]
                + workload_argv("python3", args, steps, warmup, tag))
        env, cwd = ch_env(), WORKLOAD_DIR
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError("%s run failed (rc %d): %s" % (arm, proc.returncode, proc.stderr[-2000:]))
    return json.loads(lines[-1])


def summary(values):
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1],
            "spread": (ordered[-1] - ordered[0]) / statistics.median(ordered), "n": len(ordered)}


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    arms = ["bare", "official", "modak"]
    med = [data["arms"][a]["per_sample_ms"]["median"] for a in arms]
    low = [m - data["arms"][a]["per_sample_ms"]["min"] for a, m in zip(arms, med)]
    high = [data["arms"][a]["per_sample_ms"]["max"] - m for a, m in zip(arms, med)]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar(arms, med, yerr=[low, high], capsize=6, color=["#999999", "#5b8db8", "#d9822b"])
    for i, a in enumerate(arms):
        for r in data["arms"][a]["per_sample_ms"]["runs"]:
            ax.plot(i, r, "k.", alpha=0.5)
    ax.set_ylabel("ms per training sample (lower is better)")
    ax.set_title("MNIST-CNN, torch 2.13.0 CPU: overhead %+.1f %%, speedup %.2fx"
                 % (100 * data["container_overhead"], data["speedup_vs_official"]), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def markdown(data):
    """The table of docs/performance.md from a containers.json."""
    rows = ["| arm | image | settings | median ms/sample | min-max | spread | foreign load |", "|---|---|---|---|---|---|---|"]
    for arm in ("bare", "official", "modak"):
        a = data["arms"][arm]
        ms = a["per_sample_ms"]
        cfg = a["config"]
        loads = [x for x in a["foreign_load"] if x is not None]
        rows.append("| %s | %s | %d threads, batch %d, %s%s | %.3f | %.3f-%.3f | %.0f %% | %.2f-%.2f |" % (
            arm, {"bare": "none (host Python)", "official": "official-style",
                  "modak": "modak's recipe"}[arm], cfg["threads"], cfg["batch_size"], cfg["precision"],
            ", compile" if cfg["compile"] else "", ms["median"], ms["min"], ms["max"], 100 * ms["spread"],
            min(loads) if loads else 0, max(loads) if loads else 0))
    return "\n".join(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--base", default="localhost/modak/debian:bookworm")
    p.add_argument("--wheels", default=os.environ.get("MODAK_WHEELS", "/opt/wheels"))
    p.add_argument("--work", default="/var/tmp/modak-bench-containers")
    p.add_argument("--output", default=os.path.join(RESULTS, "containers.json"))
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--markdown", help="print the table of this containers.json and exit")
    args = p.parse_args(argv)
    if args.markdown:
        with open(args.markdown) as handle:
            sys.stdout.write(markdown(json.load(handle)) + "\n")
        return 0
    started = time.time()
    os.makedirs(args.work, exist_ok=True)
    images = build_images(args.work, args.base, args.wheels)
    built = time.time()
    autotune(STORE)
    tuned = time.time()
    plan = {"images": images, "modak": modak_settings(), "bare_env": [], "workload": stage_workload(args.work)}
    rng = random.Random(args.seed)
    records = {"bare": [], "official": [], "modak": []}
    order = []
    for rep in range(args.reps):
        arms = list(records)
        rng.shuffle(arms)
        for arm in arms:
            record = run_arm(arm, plan, args.steps, args.warmup, "%s-%d" % (arm, rep))
            records[arm].append(record)
            order.append(arm)
            sys.stderr.write("%s rep %d: %.3f ms/sample (foreign load %.2f)\n" % (
                arm, rep, 1e3 * record["timing"]["per_sample_s"], store.foreign_load(record) or 0.0))
    arms = {}
    for arm, recs in records.items():
        per_sample = [1e3 * r["timing"]["per_sample_s"] for r in recs]
        arms[arm] = {"per_sample_ms": dict(summary(per_sample), runs=per_sample),
                     "config": recs[0]["config"], "versions": recs[0]["versions"],
                     "foreign_load": [store.foreign_load(r) for r in recs],
                     "loss_last": [r["loss"]["last"] for r in recs]}
    med = {a: arms[a]["per_sample_ms"]["median"] for a in arms}
    paired_overhead = [o / b - 1 for o, b in zip(arms["official"]["per_sample_ms"]["runs"],
                                                 arms["bare"]["per_sample_ms"]["runs"])]
    paired_speedup = [o / m for o, m in zip(arms["official"]["per_sample_ms"]["runs"],
                                            arms["modak"]["per_sample_ms"]["runs"])]
    data = {
        "schema": "modak-containers/1",
        "workload": "benchmarks/workload/mnist_cnn.py (synthetic MNIST-shaped data)",
        "machine": records["bare"][0]["hardware"],
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "build_s": round(built - started, 1),
        "autotune_s": round(tuned - built, 1),
        "autotune_store": os.path.relpath(STORE, ROOT),
        "wall_s": round(time.time() - started, 1),
        "method": {"reps": args.reps, "steps": args.steps, "warmup": args.warmup, "seed": args.seed,
                   "order": order, "runtime": "charliecloud (ch-run), images built with ch-image",
                   "measure": "ms per training sample = median step time / batch size"},
        "images": images,
        "settings": {"bare": {"args": DEFAULT_ARGS, "env": {}}, "official": {"args": DEFAULT_ARGS, "env": {}},
                     "modak": {"args": plan["modak"]["args"], "env": dict(plan["modak"]["env"]),
                               "prediction": plan["modak"]["prediction"]}},
        "arms": arms,
        "container_overhead": med["official"] / med["bare"] - 1,
        "container_overhead_paired_median": statistics.median(paired_overhead),
        "speedup_vs_official": med["official"] / med["modak"],
        "speedup_vs_official_paired_median": statistics.median(paired_speedup),
        "goals": {"container_overhead": "<= 0.03", "speedup_vs_official": ">= 1.5"},
        "paper": {"custom_container_pytorch_cpu_gain": 0.17},
    }
    data["goals_met"] = {"container_overhead": data["container_overhead"] <= 0.03,
                         "speedup_vs_official": data["speedup_vs_official"] >= 1.5}
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as handle:
        json.dump(data, handle, indent=1, sort_keys=True, default=str)
        handle.write("\n")
    plot(data, os.path.splitext(args.output)[0] + ".png")
    sys.stdout.write(json.dumps({k: data[k] for k in ("container_overhead", "speedup_vs_official", "goals_met")},
                                sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
