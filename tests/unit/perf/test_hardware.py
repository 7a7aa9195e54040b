"""One definition of the host's CPU facts and hardware class, for x86, Arm and POWER hosts."""

from __future__ import annotations

import importlib.util
import os

import pytest

from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware, store

X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu sse sse2 avx avx2 fma avx512f avx512bw avx512vl avx512_bf16 avx512_vnni
"""
ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm sve bf16 i8mm
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd40
"""
POWER = """processor\t: 0
cpu\t\t: POWER9 (raw), altivec supported
clock\t\t: 3800.000000MHz
revision\t: 2.3 (pvr 004e 1203)

timebase\t: 512000000
platform\t: PowerNV
"""

CASES = {
    "x86": (X86, "x86_64", "AMD EPYC 9R14 96-Core Processor|x86_64|96c|avx2+avx512_bf16+avx512f"),
    "arm": (ARM, "aarch64", "Arm implementer 0x41 part 0xd40|aarch64|96c|bf16+sve"),
    "power": (POWER, "ppc64le", "POWER9 (raw)|ppc64le|96c|-"),
}


def _workload_hardware():
    """The hardware module exactly as the benchmark workload loads it (by path, outside the collection)."""
    path = os.path.join(ROOT, "benchmarks", "workload", "mnist_cnn.py")
    spec = importlib.util.spec_from_file_location("modak_workload_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._hardware_module()  # pylint: disable=protected-access


@pytest.mark.parametrize("name", sorted(CASES))
def test_hardware_class_of_each_architecture(name):
    text, machine, expected = CASES[name]
    facts = hardware.facts(cpuinfo=text, machine=machine, cores=96, usable_cores=96)
    assert hardware.hardware_class(facts) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_workload_and_store_agree_on_the_class(name):
    text, machine, _expected = CASES[name]
    theirs = _workload_hardware().facts(cpuinfo=text, machine=machine, cores=8, usable_cores=4)
    ours = hardware.facts(cpuinfo=text, machine=machine, cores=8, usable_cores=4)
    assert theirs == ours
    assert store.hardware_class(theirs) == store.hardware_class(ours)


def test_store_reads_this_host_like_the_workload():
    host = store.local_hardware(sample_s=0.0)
    assert store.hardware_class(host) == store.hardware_class(_workload_hardware().facts())
