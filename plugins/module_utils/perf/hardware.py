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

# the flags worth recording (kernel selection in oneDNN, MKL, PyTorch and TensorFlow depends on them)
FLAGS_OF_INTEREST = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                     "avx512_fp16", "amx_bf16", "amx_int8", "amx_tile", "asimd", "sve", "bf16")
# the flags that separate hardware classes
CLASS_FLAGS = ("amx_bf16", "avx512_bf16", "avx512_fp16", "avx512f", "avx2", "sve", "bf16")


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


def facts(cpuinfo=None, machine=None, cores=None, usable_cores=None):
    """This host's CPU facts in the record's form: model, arch, cores, usable cores and flags of interest.

    The arguments stand in for /proc/cpuinfo's text, the machine name and the core counts (for tests).
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
    return {"model": model, "arch": machine or platform.machine() or "unknown", "cores": cores,
            "usable_cores": usable_cores, "flags": sorted(f for f in flags if f in FLAGS_OF_INTEREST)}


def hardware_class(hardware):
    """'AMD EPYC|x86_64|2c|avx2+avx512_bf16+avx512f': the class a model is fitted for."""
    hardware = hardware or {}
    flags = sorted(f for f in hardware.get("flags", ()) if f in CLASS_FLAGS)
    return "%s|%s|%sc|%s" % (hardware.get("model", "unknown"), hardware.get("arch", "unknown"),
                             hardware.get("cores", "?"), "+".join(flags) or "-")
