"""CPU facts come from archspec: levels, features and compiler flags of microarchitectures and ISA levels."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import cpu, schema


@pytest.mark.parametrize("name", schema.MICROARCHS)
def test_every_dsl_microarchitecture_is_known_to_archspec(name):
    found = cpu.target(name)
    assert found.family.name == cpu.arch_of(name)
    assert cpu.isa_level(name) in schema.ISA_LEVELS


@pytest.mark.parametrize("name", schema.ISA_LEVELS)
def test_every_dsl_isa_level_is_an_archspec_generic_target(name):
    assert cpu.target(name).family.name == cpu.ISA_ARCH[name]


@pytest.mark.parametrize("microarch, level", [
    ("haswell", "x86-64-v3"), ("skylake_avx512", "x86-64-v4"), ("sapphirerapids", "x86-64-v4"),
    ("zen3", "x86-64-v3"), ("zen4", "x86-64-v4"), ("neoverse_v1", "armv8.2-a"), ("neoverse_v2", "armv9.0-a"),
    ("a64fx", "armv8.2-a"), ("power9", "power9"), ("power10", "power10"),
])
def test_isa_level_of_a_microarchitecture(microarch, level):
    assert cpu.isa_level(microarch) == level


@pytest.mark.parametrize("kwargs, flags", [
    ({"microarch": "sapphirerapids"}, ["-march=sapphirerapids", "-mtune=sapphirerapids"]),
    ({"microarch": "icelake"}, ["-march=icelake-client", "-mtune=icelake-client"]),
    ({"microarch": "zen3"}, ["-march=znver3", "-mtune=znver3"]),
    ({"microarch": "neoverse_v1"}, ["-mcpu=neoverse-v1"]),
    ({"microarch": "power9"}, ["-mcpu=power9", "-mtune=power9"]),
    ({"isa": "x86-64-v3"}, ["-march=x86-64-v3", "-mtune=generic"]),
    ({"isa": "armv8.2-a"}, ["-march=armv8.2-a", "-mtune=generic"]),
])
def test_compiler_flags_come_from_archspec(kwargs, flags):
    assert cpu.compiler_flags(**kwargs) == flags


def test_a_microarchitecture_newer_than_the_compiler_falls_back_to_an_ancestor_it_knows():
    flags = cpu.compiler_flags(microarch="zen5")  # GCC 12.2 predates znver5
    assert flags and flags[0].startswith("-march=") and "znver5" not in flags[0]


def test_profile_of_a_microarchitecture_has_its_archspec_features():
    found = cpu.profile("x86", microarch="sapphirerapids")
    assert found.isa == "x86-64-v4"
    assert {"amx_bf16", "amx_tile", "avx512_bf16", "avx512f", "avx2"} <= found.features
    assert not found.assumed


def test_profile_without_facts_assumes_the_default_level():
    found = cpu.profile("arm")
    assert (found.arch, found.isa, found.assumed) == ("aarch64", "armv8.0-a", True)
