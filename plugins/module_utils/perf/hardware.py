# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's CPU facts and the hardware class a performance model is fitted for: one definition.

Both the benchmark workload (which runs on compute nodes, possibly without the collection installed,
and loads this file by its path) and the results store use these functions, so a record and the host
that reads it always agree on the class. Standard library only, on purpose.

/proc/cpuinfo differs per architecture: x86 has ``model name`` and ``flags``; Arm has ``Features`` and
often no model name, only ``CPU implementer``/``CPU part``; POWER has ``cpu`` (``POWER9 (raw), ...``)
and no flag list.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

# the flags worth recording (kernel selection in oneDNN, MKL, PyTorch and TensorFlow depends on them)
FLAGS_OF_INTEREST = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                     "avx512_fp16", "amx_bf16", "amx_int8", "amx_tile", "asimd", "sve", "bf16")
# the flags that separate hardware classes
CLASS_FLAGS = ("amx_bf16", "avx512_bf16", "avx512_fp16", "avx512f", "avx2", "sve", "bf16")
# nvidia-smi(1) --help-query-gpu: the properties that change which kernels run and what fits
GPU_QUERY = ("name", "memory.total", "compute_cap")
GPU_PROBE_TIMEOUT_S = 15


def parse_cpuinfo(text):
    """(model, flags) of the first processor in /proc/cpuinfo text, on x86, Arm and POWER."""
    model, flags, implementer, part = None, None, None, None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "model name" and model is None and value:
            model = value
        elif key == "cpu" and model is None and value:  # POWER: 'POWER9 (raw), altivec supported'
            model = value.split(",")[0].strip()
        elif key in ("flags", "features") and flags is None:
            flags = set(value.split())
        elif key == "cpu implementer" and implementer is None:
            implementer = value
        elif key == "cpu part" and part is None:
            part = value
    if model is None and implementer:
        model = "Arm implementer %s part %s" % (implementer, part or "?")
    return model or "unknown", flags or set()


def parse_gpus(text):
    """[{name, memory_gib, compute_capability}] from ``nvidia-smi --query-gpu=name,memory.total,compute_cap
    --format=csv,noheader,nounits`` output (memory in MiB); lines that do not parse are left out."""
    found = []
    for line in (text or "").splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != len(GPU_QUERY) or not parts[0]:
            continue
        try:
            memory_gib = int(round(float(parts[1]) / 1024.0))
            capability = "%d.%d" % tuple(int(v) for v in parts[2].split(".", 1))
        except (TypeError, ValueError):
            continue
        found.append({"name": parts[0], "memory_gib": memory_gib, "compute_capability": capability})
    return found


def probe_gpus():
    """This host's NVIDIA GPUs through nvidia-smi ([] where it is absent, fails or hangs past its deadline)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        proc = subprocess.run([smi, "--query-gpu=%s" % ",".join(GPU_QUERY), "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=GPU_PROBE_TIMEOUT_S, check=False,
                              env=dict(os.environ, LC_ALL="C"))
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_gpus(proc.stdout) if proc.returncode == 0 else []


def facts(cpuinfo=None, machine=None, cores=None, usable_cores=None, gpus=None):
    """This host's CPU facts in the record's form: model, arch, cores, usable cores and flags of interest, and
    ``gpus`` where the host has any (nvidia-smi).

    The arguments stand in for /proc/cpuinfo's text, the machine name, the core counts and the GPU list (for tests).
    """
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
                cpuinfo = handle.read()
        except OSError:
            cpuinfo = ""
    if cores is None:
        cores = os.cpu_count() or 1
    if usable_cores is None:
        try:
            usable_cores = len(os.sched_getaffinity(0))
        except AttributeError:
            usable_cores = cores
    model, flags = parse_cpuinfo(cpuinfo)
    found = {"model": model, "arch": machine or platform.machine() or "unknown", "cores": cores,
             "usable_cores": usable_cores, "flags": sorted(f for f in flags if f in FLAGS_OF_INTEREST)}
    gpus = probe_gpus() if gpus is None else list(gpus)
    if gpus:
        found["gpus"] = gpus
    return found


def gpu_class(hardware):
    """'1x NVIDIA H100 80GB HBM3 cc9.0 80G' for the GPUs of a host's facts ('' without GPUs)."""
    gpus = [g for g in (hardware or {}).get("gpus") or () if isinstance(g, dict)]
    if not gpus:
        return ""
    first = gpus[0]
    return "%dx %s cc%s %sG" % (len(gpus), first.get("name", "unknown"), first.get("compute_capability", "?"),
                                first.get("memory_gib", "?"))


def bf16_gpu(hardware):
    """Whether the host's GPUs run bf16 on their tensor cores (compute capability 8.0 and later)."""
    gpus = [g for g in (hardware or {}).get("gpus") or () if isinstance(g, dict)]
    try:
        return bool(gpus) and all(float(g.get("compute_capability") or 0) >= 8.0 for g in gpus)
    except (TypeError, ValueError):
        return False


def hardware_class(hardware):
    """'AMD EPYC|x86_64|2c|avx2+avx512_bf16+avx512f': the class a model is fitted for; a host with GPUs adds
    their count, model, compute capability and memory ('...|avx2|1x NVIDIA H100 80GB HBM3 cc9.0 80G')."""
    hardware = hardware or {}
    flags = sorted(f for f in hardware.get("flags", ()) if f in CLASS_FLAGS)
    found = "%s|%s|%sc|%s" % (hardware.get("model", "unknown"), hardware.get("arch", "unknown"),
                              hardware.get("cores", "?"), "+".join(flags) or "-")
    gpus = gpu_class(hardware)
    return "%s|%s" % (found, gpus) if gpus else found
