"""DSL documents the recipe tests share (each has a golden Singularity.def and Dockerfile)."""

from __future__ import annotations


def _ai(framework, details, opt_build):
    return {"job": {"application": {"executable": "python3 train.py"},
                    "optimisation": {"app_type": "ai_training", "opt_build": opt_build,
                                     "app_type-ai_training": {"config": {"ai_framework": framework},
                                                              "ai_framework-%s" % framework: details}}}}


CASES = {
    # source build with -march for Sapphire Rapids, inductor, MKL/oneDNN
    "pytorch-spr-source": _ai("pytorch", {"version": "2.5", "compile": True},
                              {"cpu_type": "x86", "cpu_microarch": "sapphirerapids"}),
    # pip wheel on a CUDA base, XLA
    "tensorflow-cuda-pip": _ai("tensorflow", {"version": "2.15.1", "xla": True},
                               {"cpu_type": "x86", "acc_type": "nvidia", "cuda_version": "12.4"}),
    # pip wheel from PyTorch's ROCm index
    "pytorch-rocm-pip": _ai("pytorch", {"version": "2.4"},
                            {"cpu_type": "x86", "acc_type": "amd", "rocm_version": "6.1"}),
    # an MPI application with OpenMP affinity
    "hpc-openmpi": {"job": {"application": {"executable": "./solver"},
                            "optimisation": {"app_type": "hpc",
                                             "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v3"},
                                             "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                              "parallelisation-mpi": {"library": "openmpi"}}}}},
    # an OpenMP application: affinity in the environment
    "hpc-openmp": {"job": {"application": {"executable": "./solver", "app_tag": "solver"},
                           "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "arm"},
                                            "app_type-hpc": {"config": {"parallelisation": "openmp"},
                                                             "parallelisation-openmp": {"affinity": "spread"}}}}},
}
