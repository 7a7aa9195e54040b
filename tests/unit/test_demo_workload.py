"""The demo copies the MNIST workload next to its job scripts, with perf/hardware.py beside it: the workload must
run there, outside the collection's tree, and describe the CPU with that copy."""

from __future__ import annotations

import importlib.util
import os
import shutil

from helpers import ROOT


def test_workload_copied_next_to_a_job_script_uses_the_hardware_module_beside_it(tmp_path):
    shutil.copy(os.path.join(ROOT, "benchmarks", "workload", "mnist_cnn.py"), str(tmp_path))
    shutil.copy(os.path.join(ROOT, "plugins", "module_utils", "perf", "hardware.py"), str(tmp_path))
    spec = importlib.util.spec_from_file_location("modak_demo_workload", str(tmp_path / "mnist_cnn.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    hardware = module._hardware_module()  # pylint: disable=protected-access
    assert os.path.dirname(hardware.__file__) == str(tmp_path)
    assert hardware.facts(cpuinfo="model name\t: Test CPU\nflags\t\t: avx2 fma\n", machine="x86_64", cores=2,
                          usable_cores=2)["model"] == "Test CPU"
