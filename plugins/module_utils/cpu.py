# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU facts the matcher and the recipes need, read from archspec (the database Spack and hpccm use).

The DSL names ISA levels as compilers do (``x86-64-v3``, ``armv8.2-a``, ``power9``) and
microarchitectures by their archspec names. Features, the level a microarchitecture implies and
the ``-march``/``-mcpu`` flags all come from archspec's ``microarchitectures.json``; nothing here
is a hand-written feature table. archspec is loaded on first use only.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError

_LIB = []

# DSL cpu_type -> machine architecture (the original's 'amd' meant AMD x86 CPUs)
CPU_TYPE_ARCH = {"x86": "x86_64", "amd": "x86_64", "arm": "aarch64", "power": "ppc64le"}

# the DSL's ISA level names -> archspec generic targets; the order within an architecture is the rank
ISA_TARGETS = {
    "x86-64": "x86_64", "x86-64-v2": "x86_64_v2", "x86-64-v3": "x86_64_v3", "x86-64-v4": "x86_64_v4",
    "armv8.0-a": "aarch64", "armv8.2-a": "armv8.2a", "armv9.0-a": "armv9.0a",
    "power9": "power9le", "power10": "power10le",
}
ISA_ARCH = {
    "x86-64": "x86_64", "x86-64-v2": "x86_64", "x86-64-v3": "x86_64", "x86-64-v4": "x86_64",
    "armv8.0-a": "aarch64", "armv8.2-a": "aarch64", "armv9.0-a": "aarch64",
    "power9": "ppc64le", "power10": "ppc64le",
}
ISA_RANK = {name: rank for rank, name in enumerate(
    ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"])}
ISA_RANK.update({"armv8.0-a": 0, "armv8.2-a": 1, "armv9.0-a": 2, "power9": 0, "power10": 1})
# the level assumed when the DSL names neither an ISA level, a microarchitecture nor features:
# x86-64-v3 (AVX2, FMA) is what every x86 HPC node in service offers (Haswell, Zen and later)
DEFAULT_ISA = {"x86_64": "x86-64-v3", "aarch64": "armv8.0-a", "ppc64le": "power9"}
# DSL microarchitecture names that are not archspec's own: POWER targets carry an endianness suffix
# there, and the newest Xeons are not in archspec 0.2.7 yet (they are read as their common
# predecessor, so nothing they may lack is assumed)
MICROARCH_TARGETS = {"power9": "power9le", "power10": "power10le",
                     "emeraldrapids": "sapphirerapids", "graniterapids": "sapphirerapids"}
# the features that frameworks and math libraries dispatch on beyond the ISA level: what image labels
# name and what matching compares (an image built with -march keeps its microarchitecture in its flags)
NOTABLE_FEATURES = frozenset(["amx_bf16", "amx_fp16", "amx_int8", "amx_tile", "avx512_bf16", "avx512_fp16",
                              "avx512_vnni", "sve", "sve2", "bf16", "i8mm", "mma"])
# Debian 12's GCC, the compiler of the recipes' default base image
DEFAULT_COMPILER = ("gcc", "12.2.0")


def _archspec():
    """archspec.cpu, imported on first use (it costs tens of milliseconds)."""
    if not _LIB:
        try:
            import archspec.cpu  # pylint: disable=import-outside-toplevel
        except ImportError as exc:
            raise ModakError("the Python library archspec is required for CPU facts (pip install archspec): %s"
                             % exc)
        _LIB.append(archspec.cpu)
    return _LIB[0]


def _targets():
    return _archspec().TARGETS


def target(name):
    """The archspec target of a DSL microarchitecture or ISA level name (KeyError when unknown)."""
    key = ISA_TARGETS.get(name) or MICROARCH_TARGETS.get(name, name)
    return _targets()[key]


def isa_features(level):
    """The feature flags (/proc/cpuinfo names) an ISA level guarantees."""
    if level not in ISA_TARGETS:
        return frozenset()
    return frozenset(target(level).features)


def isa_level(microarch):
    """The highest DSL ISA level a microarchitecture implies (e.g. sapphirerapids -> x86-64-v4)."""
    found = target(microarch)
    names = {found.name} | {a.name for a in found.ancestors}
    arch = found.family.name
    levels = [lvl for lvl, key in ISA_TARGETS.items() if key in names and ISA_ARCH[lvl] == arch]
    if not levels:
        return DEFAULT_ISA.get(arch, "x86-64")
    return max(levels, key=lambda lvl: ISA_RANK[lvl])


def arch_of(name):
    """x86_64, aarch64 or ppc64le for a DSL ISA level or microarchitecture name (None when unknown)."""
    if name in ISA_ARCH:
        return ISA_ARCH[name]
    try:
        return target(name).family.name
    except KeyError:
        return None


def compiler_flags(microarch=None, isa=None, compiler=DEFAULT_COMPILER):
    """``-march``/``-mtune`` or ``-mcpu`` flags for a microarchitecture or ISA level, from archspec.

    When the compiler is too old for the microarchitecture, its newest ancestor the compiler knows is used.
    """
    chosen = target(microarch) if microarch else target(isa or "x86-64")
    for candidate in [chosen] + list(chosen.ancestors):
        try:
            return candidate.optimization_flags(*compiler).split()
        except (_archspec().UnsupportedMicroarchitecture, ValueError):
            continue
    return []


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
        level = isa_level(microarch)
        extra |= target(microarch).features
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
        extra |= isa_features(level)
    return CpuProfile(arch, level, extra, assumed=assumed, source="; ".join(source))
