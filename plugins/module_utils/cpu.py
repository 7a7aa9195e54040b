# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU facts the matcher needs: architectures, x86-64 ISA levels and microarchitectures.

The feature sets follow the x86-64 psABI levels; microarchitecture names follow archspec.
"""

from __future__ import annotations

# DSL cpu_type -> machine architecture (the original's 'amd' meant AMD x86 CPUs)
CPU_TYPE_ARCH = {"x86": "x86_64", "amd": "x86_64", "arm": "aarch64", "power": "ppc64le"}

_V2 = frozenset(["cx16", "lahf_lm", "popcnt", "sse3", "sse4_1", "sse4_2", "ssse3"])
_V3 = _V2 | frozenset(["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"])
_V4 = _V3 | frozenset(["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"])

ISA_FEATURES = {
    "x86-64": frozenset(),
    "x86-64-v2": _V2,
    "x86-64-v3": _V3,
    "x86-64-v4": _V4,
    "armv8.0-a": frozenset(),
    "armv8.2-a": frozenset(["asimddp", "fphp"]),
    "armv9.0-a": frozenset(["asimddp", "fphp", "sve", "sve2"]),
    "power9": frozenset(),
    "power10": frozenset(["mma"]),
}
ISA_RANK = {name: rank for rank, name in enumerate(
    ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"])}
ISA_RANK.update({"armv8.0-a": 0, "armv8.2-a": 1, "armv9.0-a": 2, "power9": 0, "power10": 1})
ISA_ARCH = {
    "x86-64": "x86_64", "x86-64-v2": "x86_64", "x86-64-v3": "x86_64", "x86-64-v4": "x86_64",
    "armv8.0-a": "aarch64", "armv8.2-a": "aarch64", "armv9.0-a": "aarch64",
    "power9": "ppc64le", "power10": "ppc64le",
}
# the level assumed when the DSL names neither an ISA level, a microarchitecture nor features:
# x86-64-v3 (AVX2, FMA) is what every x86 HPC node in service offers (Haswell, Zen and later)
DEFAULT_ISA = {"x86_64": "x86-64-v3", "aarch64": "armv8.0-a", "ppc64le": "power9"}

_AMX = frozenset(["amx_bf16", "amx_int8", "amx_tile", "avx512_bf16", "avx512_vnni", "avx512_fp16"])
MICROARCH = {
    # name: (isa level, extra features)
    "haswell": ("x86-64-v3", frozenset()),
    "broadwell": ("x86-64-v3", frozenset()),
    "skylake": ("x86-64-v3", frozenset()),
    "skylake_avx512": ("x86-64-v4", frozenset()),
    "cascadelake": ("x86-64-v4", frozenset(["avx512_vnni"])),
    "icelake": ("x86-64-v4", frozenset(["avx512_vnni", "avx512_vbmi2"])),
    "sapphirerapids": ("x86-64-v4", _AMX),
    "emeraldrapids": ("x86-64-v4", _AMX),
    "graniterapids": ("x86-64-v4", _AMX | frozenset(["amx_fp16"])),
    "zen": ("x86-64-v3", frozenset()),
    "zen2": ("x86-64-v3", frozenset()),
    "zen3": ("x86-64-v3", frozenset()),
    "zen4": ("x86-64-v4", frozenset(["avx512_bf16", "avx512_vnni"])),
    "zen5": ("x86-64-v4", frozenset(["avx512_bf16", "avx512_vnni"])),
    "neoverse_n1": ("armv8.2-a", frozenset()),
    "neoverse_v1": ("armv8.2-a", frozenset(["sve", "bf16"])),
    "neoverse_v2": ("armv9.0-a", frozenset(["bf16"])),
    "a64fx": ("armv8.2-a", frozenset(["sve"])),
    "power9": ("power9", frozenset()),
    "power10": ("power10", frozenset()),
}


class CpuProfile(object):
    """What the target CPU offers: architecture, ISA level and feature flags."""

    def __init__(self, arch, isa, features, assumed=False, source=""):
        self.arch = arch
        self.isa = isa
        self.features = frozenset(features)
        self.assumed = assumed
        self.source = source

    def lacks(self, needed):
        return sorted(set(needed) - self.features)

    def as_dict(self):
        return {"arch": self.arch, "isa": self.isa, "features": sorted(self.features),
                "assumed": self.assumed, "source": self.source}


def profile(cpu_type=None, isa=None, microarch=None, features=()):
    """Build the target's CpuProfile from the DSL's opt_build fields."""
    arch = CPU_TYPE_ARCH.get(cpu_type or "x86", "x86_64")
    extra = set(features or ())
    source = []
    level = None
    if microarch:
        level, more = MICROARCH[microarch]
        extra |= more
        source.append("microarchitecture %s" % microarch)
    if isa:
        if level is None or ISA_RANK.get(isa, 0) > ISA_RANK.get(level, 0):
            level = isa
        source.append("ISA level %s" % isa)
    if features:
        source.append("declared features")
    assumed = level is None and not features
    if level is None:
        level = DEFAULT_ISA.get(arch, "x86-64")
        if not source:
            source.append("assumed %s (the DSL declares no ISA level, microarchitecture or features)" % level)
    if ISA_ARCH.get(level) == arch:
        extra |= ISA_FEATURES.get(level, frozenset())
    return CpuProfile(arch, level, extra, assumed=assumed, source="; ".join(source))
