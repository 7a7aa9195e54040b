# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU benchmark, one command on a GPU node's own python3 (no ansible there): modak's choice against the
framework's reference setting, on MNIST-CNN, ResNet-50 and a small GPT.

    python3 benchmarks/gpu/run.py --out DIR            # on a GPU node: about 5 minutes on one H100
    python3 benchmarks/gpu/run.py --smoke --out DIR    # anywhere, on the CPU: tiny sizes, seconds
    python3 benchmarks/gpu/run.py --markdown FILE...   # the docs' tables of gpu.json files

Per model: (1) modak chooses: the rules' choice for this GPU, then ``search.autotune`` measures at most a third of the
grid, then interleaved confirmation rounds and the never-slower rule (``search.decide``); (2) every arm of the
factorial grid, an A/A control (the default built twice), modak's choice (built again) and modak's choice compiled
(torch.compile, the paper's graph-compiler row) run in interleaved rounds, in a shuffled order per round. Each ratio
is the geometric mean over rounds of the default's time over the arm's in the same round, with a 90 % interval
(Student's t over rounds). First-step (compile, cuDNN search) and warm-up times are kept apart from the steady state.
Writes DIR/gpu.json (after each model, atomically) and DIR/gpu.png.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import runner  # noqa: E402,F401  pylint: disable=unused-import  # puts the collection on sys.path
from arms import Arm  # noqa: E402
from models import SPECS  # noqa: E402

from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware, search, stats, store  # noqa: E402

SMI_FIELDS = ("name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem", "power.draw",
              "power.limit", "temperature.gpu", "memory.total", "pstate")
ORDER = ("resnet50", "gpt", "mnist_cnn")
SHARE = {"resnet50": 0.5, "gpt": 0.25, "mnist_cnn": 0.25}   # of the time left after the smoke check
CONFIRM_ROUNDS = 3


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="folder for gpu.json and gpu.png")
    p.add_argument("--markdown", nargs="+", metavar="FILE", help="print the docs' tables of these gpu.json and exit")
    p.add_argument("--smoke", action="store_true", help="the CPU form: tiny sizes, one step per burst, 2 rounds")
    p.add_argument("--models", default=",".join(ORDER), help="comma-separated, of %s" % ", ".join(ORDER))
    p.add_argument("--budget-s", type=float, default=300.0, help="wall time for the models after the smoke check")
    p.add_argument("--burst-s", type=float, default=0.25, help="seconds of training per timed burst")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default: as many as fit, 3 to 7)")
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile arms")
    p.add_argument("--device", default=None, help="torch device (default: cuda where present, else cpu)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.out and not args.markdown:
        p.error("--out is required")
    return args


def nvidia_smi():
    """The GPU's name, clocks, power and driver as nvidia-smi reports them (None without nvidia-smi)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        proc = subprocess.run([smi, "--query-gpu=%s" % ",".join(SMI_FIELDS), "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20, check=False, env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)}
    line = (proc.stdout.strip().splitlines() or [""])[0]
    values = [v.strip() for v in line.split(",")]
    return dict(zip(SMI_FIELDS, values)) if len(values) == len(SMI_FIELDS) else {"raw": proc.stdout[-500:]}


def versions(torch):
    found = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
             "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None}
    for name in ("torchvision", "triton", "numpy", "sklearn"):
        try:
            found[name] = __import__(name).__version__
        except ImportError:
            found[name] = None
    return found


def smoke_check(torch, device, smoke):
    """A few seconds: the device computes, and how fast a bf16 matrix product runs on it."""
    size, reps = (256, 2) if smoke else (8192, 20)
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    (a @ b).float().sum().item()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _rep in range(reps):
        c = a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    found = {"device": str(device), "bf16_matmul_tflops": 2.0 * size ** 3 * reps / elapsed / 1e12,
             "finite": bool(torch.isfinite(c.float()).all().item())}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        found.update(name=props.name, multiprocessors=props.multi_processor_count,
                     memory_gib=round(props.total_memory / 2 ** 30, 1), capability="%d.%d" % (props.major, props.minor))
    return found


def paired(base, arm):
    """Speedup of ``arm`` over ``base`` from their times in the same rounds: geometric mean and 90 % interval."""
    logs = [math.log(b / a) for b, a in zip(base, arm) if a > 0 and b > 0]
    n = len(logs)
    if not n:
        return {"speedup": None, "low": None, "high": None, "rounds": 0}
    mean = sum(logs) / n
    if n < 2:
        return {"speedup": math.exp(mean), "low": None, "high": None, "rounds": n}
    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / (n - 1))
    half = stats.t_quantile(n - 1) * sd / math.sqrt(n)
    return {"speedup": math.exp(mean), "low": math.exp(mean - half), "high": math.exp(mean + half), "rounds": n}


def record(spec, config, per_sample_s, host, phase):
    return {"workload": spec.name, "application": spec.name, "config": store.normalise_config(config),
            "hardware": host, "timing": {"per_sample_s": per_sample_s}, "load": {"other_busy_cores": 0.0},
            "ok": True, "phase": phase}


class Bench(object):
    def __init__(self, args, torch, device, host):
        self.args, self.torch, self.device, self.host = args, torch, device, host
        self.hw_class = store.hardware_class(host)
        self.burst_s = 0.0 if args.smoke else args.burst_s

    def new_arm(self, label, kind, spec, config):
        return Arm(label, kind, spec, config, self.torch, self.device, self.args.smoke).warm(self.burst_s)

    def model(self, spec, deadline):
        started = time.perf_counter()
        base = store.normalise_config(dict(spec.default, threads=self.host["cores"]))
        candidates = search.space(spec.grid, base)
        grid_arms = {}

        def grid_arm(config):
            key = store.config_key(config)
            if key not in grid_arms:
                grid_arms[key] = self.new_arm(key, "grid", spec, config)
            return grid_arms[key]

        def measure_once(config, phase):
            return record(spec, config, grid_arm(config).burst(), self.host, phase)

        def measure(config):
            return [measure_once(config, "autotune") for _repeat in range(search.MIN_REPEATS)]

        start, notes = search.rules(candidates, base, self.host, (), spec.conv)
        budget = search.default_budget(candidates)
        tuned = search.autotune(candidates, measure, base, max_runs=budget, hw_class=self.hw_class, start=start)
        choice = tuned["choice"]
        confirmed = []
        if store.config_key(choice) != store.config_key(base):
            for round_ in range(CONFIRM_ROUNDS):
                for config in ((base, choice) if round_ % 2 == 0 else (choice, base)):
                    confirmed.append(measure_once(config, search.CONFIRM_PHASE))
        keep, why, numbers = search.decide(tuned["history"] + confirmed, choice, base, confirmed=confirmed)
        modak = choice if keep else base
        predicted = tuned["model"].interval(modak) if tuned.get("model") is not None else None
        tuning_s = time.perf_counter() - started

        arms = [grid_arm(config) for config in candidates]
        default_arm = grid_arms[store.config_key(base)]
        arms.append(self.new_arm("A/A control: the default again", "control", spec, base))
        arms.append(self.new_arm("modak's choice", "modak", spec, modak))
        compiled, compile_error = None, None
        if not self.args.no_compile:
            try:
                compiled = self.new_arm("modak's choice + torch.compile", "compile", spec, dict(modak, compile=True))
                arms.append(compiled)
            except Exception as exc:  # pylint: disable=broad-except  # the eager arms' results stand without it
                compile_error = "%s: %s" % (type(exc).__name__, str(exc)[:2000])
        built_s = time.perf_counter() - started
        round_s = sum(arm.steps * (arm.warm_step_s or 0.0) for arm in arms)
        if self.args.rounds:
            rounds = self.args.rounds
        elif self.args.smoke:
            rounds = 2
        else:
            rounds = int(max(3, min(7, (deadline - time.perf_counter()) // max(round_s, 1e-3))))
        rng = random.Random(self.args.seed)
        for _round in range(rounds):
            order = list(arms)
            rng.shuffle(order)
            for arm in order:
                arm.times.append(arm.burst())
        rows = []
        for arm in arms:
            row = arm.summary()
            row["key"] = store.config_key(arm.config)
            row["median_per_sample_s"] = sorted(arm.times)[len(arm.times) // 2]
            row["samples_per_s"] = 1.0 / row["median_per_sample_s"]
            row["vs_default"] = paired(default_arm.times, arm.times)
            rows.append(row)
        grid_rows = [row for row in rows if row["kind"] == "grid"]
        best = max(grid_rows, key=lambda row: row["vs_default"]["speedup"])
        mine = next(row for row in rows if row["kind"] == "modak")
        result = {
            "title": spec.title, "unit": spec.unit, "conv": spec.conv, "grid": spec.grid, "default": base,
            "grid_size": len(candidates), "rules_choice": start, "rules_notes": notes,
            "autotune": {"budget": budget, "configs_measured": tuned["configs_run"], "runs": tuned["runs"],
                         "stop_reason": tuned["stop_reason"], "model_choice": store.config_key(choice),
                         "steps": tuned["steps"], "confirm_runs": len(confirmed), "kept": keep, "decision": why,
                         "decision_numbers": numbers, "seconds": tuning_s},
            "modak_choice": modak, "modak_key": store.config_key(modak),
            "predicted_per_sample_s": (dict(zip(("value", "low", "high"), predicted)) if predicted else None),
            "rounds": rounds, "build_and_warm_s": built_s - tuning_s, "seconds": time.perf_counter() - started,
            "arms": rows, "best_grid_arm": best["key"],
            "modak_vs_best": mine["vs_default"]["speedup"] / best["vs_default"]["speedup"],
            "modak_vs_default": mine["vs_default"],
            "records": tuned["history"] + confirmed,
        }
        if compile_error:
            result["compile"] = {"error": compile_error}
        if compiled is not None:
            eager = [row for row in rows if row["kind"] == "modak"][0]
            result["compile"] = {
                "compile_vs_eager": paired(mine["per_sample_s"], compiled.times),
                "first_step_s": {"eager": eager["first_step_s"], "compiled": compiled.first_step_s},
                "modak_rule": "compile is kept off unless measured on this hardware class, so modak's choice runs "
                              "eager",
                "model_predicted_speedup": (tuned["model"].predict(modak)[0] /
                                            tuned["model"].predict(dict(modak, compile=True))[0]
                                            if tuned.get("model") is not None else None)}
        return result


def atomic_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True, default=str)
    os.replace(tmp, path)


def figure(data, path):
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    models = [name for name in data["models"] if "arms" in data["models"][name]]
    if not models:
        return False
    colours = {"grid": "#9e9e9e", "control": "#1f77b4", "modak": "#2ca02c", "compile": "#ff7f0e"}
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 7), squeeze=False)
    for ax, name in zip(axes[0], models):
        rows = sorted(data["models"][name]["arms"], key=lambda row: row["vs_default"]["speedup"] or 0)
        ys = range(len(rows))
        values = [row["vs_default"]["speedup"] or 0 for row in rows]
        low = [v - (row["vs_default"]["low"] or v) for v, row in zip(values, rows)]
        high = [(row["vs_default"]["high"] or v) - v for v, row in zip(values, rows)]
        ax.barh(list(ys), values, xerr=[low, high], color=[colours[row["kind"]] for row in rows])
        ax.set_yticks(list(ys))
        ax.set_yticklabels([row["label"] if row["kind"] != "grid" else row["key"] for row in rows], fontsize=7)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("speedup over the framework default (90 % interval)")
        ax.set_title(data["models"][name]["title"])
    fig.suptitle("%s: %s" % (data.get("gpu", {}).get("name") or data["host"]["model"], data["mode"]))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def describe(config):
    """'batch 256, bf16, channels-last, cuDNN autotuning' for a configuration."""
    parts = ["batch %d" % config["batch_size"], config["precision"] if config["precision"] == "bf16" else "fp32"]
    parts += [name for knob, name in (("channels_last", "channels-last"), ("cudnn_benchmark", "cuDNN autotuning"),
                                      ("compile", "torch.compile")) if config.get(knob)]
    return ", ".join(parts)


def _ratio(found):
    if not found or found.get("speedup") is None:
        return "-"
    if found.get("low") is None:
        return "%.2fx" % found["speedup"]
    return "%.2fx (%.2f-%.2f)" % (found["speedup"], found["low"], found["high"])


def markdown(paths):
    """The docs' two tables (modak's choice; the graph compiler) for gpu.json files, one row per GPU and model."""
    choice = ["| GPU | model | framework default | modak's choice | modak vs default (90 % CI) | best grid arm | "
              "modak / best | configurations measured | A/A control | rounds |", "|" + " --- |" * 10]
    compiler = ["| GPU | model | torch.compile vs modak's eager choice (90 % CI) | first step, eager / compiled | "
                "modak's prediction |", "|" + " --- |" * 5]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        gpu = data.get("gpu", {}).get("name") or data["host"]["model"]
        for name in ORDER:
            model = data["models"].get(name)
            if not model or "error" in model:
                continue
            rows = {row["kind"]: row for row in model["arms"] if row["kind"] != "grid"}
            best = next(row for row in model["arms"] if row["kind"] == "grid" and row["key"] == model["best_grid_arm"])
            choice.append("| %s | %s | %s | %s | %s | %s: %s | %.3f | %d of %d | %s | %d |" % (
                gpu, model["title"], describe(model["default"]), describe(model["modak_choice"]),
                _ratio(model["modak_vs_default"]), describe(best["config"]), _ratio(best["vs_default"]),
                model["modak_vs_best"], model["autotune"]["configs_measured"], model["grid_size"],
                _ratio(rows["control"]["vs_default"]), model["rounds"]))
            found = model.get("compile") or {}
            if "compile_vs_eager" in found:
                predicted = found.get("model_predicted_speedup")
                compiler.append("| %s | %s | %s | %.2f s / %.1f s | %s |" % (
                    gpu, model["title"], _ratio(found["compile_vs_eager"]), found["first_step_s"]["eager"],
                    found["first_step_s"]["compiled"],
                    "no gain (%s; model %.2fx)" % ("compile stays off until measured", predicted)
                    if predicted is not None else "no gain: compile stays off until measured"))
    return "\n".join(choice) + "\n\n" + "\n".join(compiler) + "\n"


def main(argv=None):
    args = parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown(args.markdown))
        return 0
    wall0 = time.perf_counter()
    import torch  # pylint: disable=import-outside-toplevel
    os.makedirs(args.out, exist_ok=True)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type != "cuda" and not args.smoke:
        raise SystemExit("modak: no CUDA device; the CPU form of this benchmark is --smoke")
    torch.manual_seed(args.seed)
    host = hardware.facts()
    if device.type == "cuda" and not host.get("gpus"):   # no nvidia-smi: the same facts from the driver, via torch
        props = torch.cuda.get_device_properties(device)
        host["gpus"] = [{"name": props.name, "memory_gib": int(round(props.total_memory / 2 ** 30)),
                         "compute_capability": "%d.%d" % (props.major, props.minor)}]
    out = os.path.join(args.out, "gpu.json")
    data = {"mode": "smoke (CPU)" if args.smoke else "full", "host": host, "hw_class": store.hardware_class(host),
            "versions": versions(torch), "smi_before": nvidia_smi(), "command": sys.argv, "models": {}}
    began = time.perf_counter()
    data["smoke_check"] = smoke_check(torch, device, args.smoke)
    data["smoke_check"]["seconds"] = time.perf_counter() - began
    data["gpu"] = {"name": data["smoke_check"].get("name")}
    atomic_json(out, data)
    names = [name for name in ORDER if name in args.models.split(",")]
    start = time.perf_counter()
    total = sum(SHARE[name] for name in names)
    spent_share = 0.0
    for name in names:
        spent_share += SHARE[name]
        deadline = start + args.budget_s * spent_share / total
        try:
            data["models"][name] = Bench(args, torch, device, host).model(SPECS[name], deadline)
        except Exception as exc:  # pylint: disable=broad-except  # one model's failure keeps the others' results
            data["models"][name] = {"error": "%s: %s" % (type(exc).__name__, exc)}
        data["models"][name]["smi_after"] = nvidia_smi()
        gc.collect()
        if device.type == "cuda":
            data["models"][name]["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2 ** 30
            torch.cuda.empty_cache()
        atomic_json(out, data)
        summary(name, data["models"][name])
    data["smi_after"] = nvidia_smi()
    data["wall_s"] = time.perf_counter() - wall0
    data["png"] = figure(data, os.path.join(args.out, "gpu.png"))
    atomic_json(out, data)
    sys.stdout.write("wall %.1f s; %s\n" % (data["wall_s"], out))
    return 1 if any("error" in model for model in data["models"].values()) else 0


def summary(name, model):
    if "error" in model:
        sys.stdout.write("%s: FAILED %s\n" % (name, model["error"]))
        return
    ratio = model["modak_vs_default"]
    sys.stdout.write("%s: modak %s %.2fx the default [%s, %s] in %d rounds; best grid arm %s; modak/best %.3f; "
                     "autotune %d of %d configurations (budget %d); %.0f s\n" % (
                         name, model["modak_key"], ratio["speedup"],
                         "%.2f" % ratio["low"] if ratio["low"] else "-",
                         "%.2f" % ratio["high"] if ratio["high"] else "-", model["rounds"], model["best_grid_arm"],
                         model["modak_vs_best"], model["autotune"]["configs_measured"], model["grid_size"],
                         model["autotune"]["budget"], model["seconds"]))
    for row in model["arms"]:
        ratio = row["vs_default"]
        sys.stdout.write("  %-34s %-34s %9.1f /s  %.2fx [%s, %s]  first step %.2f s\n" % (
            row["label"][:34], row["key"], row["samples_per_s"], ratio["speedup"],
            "%.2f" % ratio["low"] if ratio["low"] else "-", "%.2f" % ratio["high"] if ratio["high"] else "-",
            row["first_step_s"]))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
