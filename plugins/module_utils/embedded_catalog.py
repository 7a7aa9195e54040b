# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Generated from catalog/images.yaml by scripts/export_catalog.py (make schema): do not edit.
"""The embedded image catalog as data: the entries of catalog/images.yaml, checked, and per entry the
recipe-backed image resolved for the default build prefix (None for a published image)."""

from __future__ import annotations

SOURCE = 'embedded catalog (catalog/images.yaml)'
SOURCE_SHA256 = '62ad82b5eabd71582b22d8ecff2fc25129abf366192965fc84bceece013bf693'

ENTRIES = [
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-1.14.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:1.14.0-py3',
        'version': '1.14.0',
    },
    {
        'build': 'optimised-pip',
        'compilers': [
            'ngraph',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'name': 'modak-tensorflow-ngraph-1.14',
        'uri': 'docker://modakopt/modak:tensorflow-ngraph-1.14',
        'version': '1.14.0',
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-1.15.5-cpu',
        'uri': 'docker://tensorflow/tensorflow:1.15.5-py3',
        'version': '1.15.5',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'cuda': '10.0',
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'cudnn',
        ],
        'name': 'tensorflow-1.15.5-gpu',
        'uri': 'docker://tensorflow/tensorflow:1.15.5-gpu-py3',
        'version': '1.15.5',
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-source',
        'compilers': [
            'xla',
        ],
        'cuda': '10.1',
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'legacy_code': 'modak-tensorflow-2.1-gpu-src',
        'math': [
            'cudnn',
            'nccl',
        ],
        'name': 'modak-tensorflow-2.1-gpu-src',
        'uri': 'docker://modakopt/modak:tensorflow-2.1-gpu-src',
        'version': '2.1.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-pip',
        'compilers': [
            'xla',
        ],
        'cuda': '10.1',
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
        ],
        'name': 'modak-tensorflow-2.1-gpu-pip',
        'uri': 'docker://modakopt/modak:tensorflow-2.1-gpu-pip',
        'version': '2.1.0',
    },
    {
        'build': 'optimised-source',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'mkl',
            'onednn',
        ],
        'name': 'modak-tensorflow-2.1-cpu-src',
        'uri': 'docker://modakopt/modak:tensorflow-2.1-cpu-src',
        'version': '2.1.0',
    },
    {
        'build': 'optimised-pip',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'name': 'modak-tensorflow-2.1-cpu-pip',
        'uri': 'docker://modakopt/modak:tensorflow-2.1-cpu-pip',
        'version': '2.1.0',
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'name': 'tensorflow-2.1.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:2.1.0-py3',
        'version': '2.1.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'cuda': '10.1',
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'cudnn',
        ],
        'name': 'tensorflow-2.1.0-gpu',
        'uri': 'docker://tensorflow/tensorflow:2.1.0-gpu-py3',
        'version': '2.1.0',
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-2.4.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:2.4.0',
        'version': '2.4.0',
    },
    {
        'build': 'optimised-source',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v3',
        'math': [
            'mkl',
            'onednn',
        ],
        'name': 'modak-tensorflow-2.4-cpu-src',
        'uri': 'docker://modakopt/modak:tensorflow-2.4-cpu-src',
        'version': '2.4.0',
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-2.10.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:2.10.0',
        'version': '2.10.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'cuda': '11.2',
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
        ],
        'name': 'tensorflow-2.10.0-gpu',
        'uri': 'docker://tensorflow/tensorflow:2.10.0-gpu',
        'version': '2.10.0',
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-2.13.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:2.13.0',
        'version': '2.13.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-source',
        'compilers': [
            'xla',
        ],
        'cuda': '12.2',
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'nccl',
        ],
        'name': 'ngc-tensorflow-2.13-gpu',
        'uri': 'docker://nvcr.io/nvidia/tensorflow:23.10-tf2-py3',
        'version': '2.13.0',
    },
    {
        'name': 'modak-tensorflow-2.15-cpu-v4',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-tensorflow': {
                    'version': '2.15.1',
                    'xla': True,
                },
                'config': {
                    'ai_framework': 'tensorflow',
                },
            },
            'opt_build': {
                'cpu_isa': 'x86-64-v4',
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-tensorflow-2.15-cpu-v3',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-tensorflow': {
                    'version': '2.15.1',
                    'xla': True,
                },
                'config': {
                    'ai_framework': 'tensorflow',
                },
            },
            'opt_build': {
                'cpu_isa': 'x86-64-v3',
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-tensorflow-2.15-cpu',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-tensorflow': {
                    'version': '2.15.1',
                    'xla': True,
                },
                'config': {
                    'ai_framework': 'tensorflow',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'onednn',
        ],
        'name': 'tensorflow-2.15.0-cpu',
        'uri': 'docker://tensorflow/tensorflow:2.15.0',
        'version': '2.15.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'cuda': '12.2',
        'framework': 'tensorflow',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
        ],
        'name': 'tensorflow-2.15.0-gpu',
        'uri': 'docker://tensorflow/tensorflow:2.15.0-gpu',
        'version': '2.15.0',
    },
    {
        'name': 'modak-tensorflow-2.16-arm',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-tensorflow': {
                    'version': '2.16.1',
                    'xla': True,
                },
                'config': {
                    'ai_framework': 'tensorflow',
                },
            },
            'opt_build': {
                'cpu_type': 'arm',
            },
        },
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'cuda': '10.1',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'mkl',
        ],
        'name': 'pytorch-1.4-cuda10.1',
        'uri': 'docker://pytorch/pytorch:1.4-cuda10.1-cudnn7-runtime',
        'version': '1.4.0',
    },
    {
        'build': 'optimised-source',
        'framework': 'pytorch',
        'isa': 'x86-64-v3',
        'math': [
            'mkl',
            'onednn',
        ],
        'name': 'modak-pytorch-1.5-cpu-src',
        'uri': 'docker://modakopt/modak:pytorch-1.5-cpu-src',
        'version': '1.5.1',
    },
    {
        'build': 'optimised-pip',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'mkl',
        ],
        'name': 'modak-pytorch-1.5-cpu-pip',
        'uri': 'docker://modakopt/modak:pytorch-1.5-cpu-pip',
        'version': '1.5.1',
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-source',
        'cuda': '10.1',
        'framework': 'pytorch',
        'isa': 'x86-64-v3',
        'math': [
            'cudnn',
            'nccl',
        ],
        'name': 'modak-pytorch-1.5-gpu-src',
        'uri': 'docker://modakopt/modak:pytorch-1.5-gpu-src',
        'version': '1.5.1',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'cuda': '11.6',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'mkl',
        ],
        'name': 'pytorch-1.13.1-cuda11.6',
        'uri': 'docker://pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime',
        'version': '1.13.1',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'inductor',
        ],
        'cuda': '12.1',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'mkl',
        ],
        'name': 'pytorch-2.1.2-cuda12.1',
        'uri': 'docker://pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime',
        'version': '2.1.2',
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-source',
        'compilers': [
            'inductor',
        ],
        'cuda': '12.3',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'nccl',
        ],
        'name': 'ngc-pytorch-2.2-gpu',
        'uri': 'docker://nvcr.io/nvidia/pytorch:24.01-py3',
        'version': '2.2.0',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'inductor',
        ],
        'cuda': '12.4',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'mkl',
        ],
        'name': 'pytorch-2.4.1-cuda12.4',
        'uri': 'docker://pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime',
        'version': '2.4.1',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'compilers': [
            'inductor',
        ],
        'cuda': '12.4',
        'framework': 'pytorch',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'mkl',
        ],
        'name': 'pytorch-2.5.1-cuda12.4',
        'uri': 'docker://pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime',
        'version': '2.5.1',
    },
    {
        'name': 'modak-pytorch-2.5-rocm6.1',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-pytorch': {
                    'version': '2.5.1',
                },
                'config': {
                    'ai_framework': 'pytorch',
                },
            },
            'opt_build': {
                'acc_type': 'amd',
                'cpu_type': 'x86',
                'rocm_version': '6.1',
            },
        },
    },
    {
        'name': 'modak-pytorch-2.5-cpu',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-pytorch': {
                    'compile': True,
                    'version': '2.5.1',
                },
                'config': {
                    'ai_framework': 'pytorch',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-pytorch-2.5-cpu-v3',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-pytorch': {
                    'compile': True,
                    'version': '2.5.1',
                },
                'config': {
                    'ai_framework': 'pytorch',
                },
            },
            'opt_build': {
                'cpu_isa': 'x86-64-v3',
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-pytorch-2.5-cpu-amx',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-pytorch': {
                    'compile': True,
                    'version': '2.5.1',
                },
                'config': {
                    'ai_framework': 'pytorch',
                },
            },
            'opt_build': {
                'cpu_microarch': 'sapphirerapids',
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-pytorch-2.5-arm',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-pytorch': {
                    'compile': True,
                    'version': '2.5.1',
                },
                'config': {
                    'ai_framework': 'pytorch',
                },
            },
            'opt_build': {
                'cpu_type': 'arm',
            },
        },
    },
    {
        'build': 'official',
        'compilers': [
            'xla',
        ],
        'description': 'Keras 2.15 ships inside the official TensorFlow 2.15.0 image',
        'framework': 'keras',
        'isa': 'x86-64-v2',
        'math': [
            'onednn',
        ],
        'name': 'keras-2.15-tf',
        'uri': 'docker://tensorflow/tensorflow:2.15.0',
        'version': '2.15.0',
    },
    {
        'name': 'modak-mxnet-1.9.1-cpu',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-mxnet': {
                    'version': '1.9.1',
                },
                'config': {
                    'ai_framework': 'mxnet',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-jax-0.4.30-cpu',
        'recipe': {
            'app_type': 'ai_training',
            'app_type-ai_training': {
                'ai_framework-jax': {
                    'version': '0.4.30',
                },
                'config': {
                    'ai_framework': 'jax',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'accelerator': 'nvidia',
        'build': 'optimised-source',
        'compilers': [
            'xla',
        ],
        'cuda': '12.4',
        'framework': 'jax',
        'isa': 'x86-64-v2',
        'math': [
            'cudnn',
            'nccl',
        ],
        'name': 'ngc-jax-gpu',
        'uri': 'docker://nvcr.io/nvidia/jax:24.04-py3',
        'version': '0.4.26',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'framework': 'openmpi',
        'isa': 'x86-64',
        'kind': 'mpi',
        'legacy_code': 'ethcscs_openmpi_3.1.3',
        'mpi': {
            'library': 'openmpi',
            'version': '3.1.3',
        },
        'name': 'ethcscs-openmpi-3.1.3',
        'uri': 'docker://ethcscs/openmpi:3.1.3',
        'version': '3.1.3',
    },
    {
        'accelerator': 'nvidia',
        'build': 'official',
        'cuda': '10.1',
        'framework': 'mpich',
        'isa': 'x86-64',
        'kind': 'mpi',
        'legacy_code': 'mpich_ub1804_cuda101_mpi314_gnugprof',
        'mpi': {
            'library': 'mpich',
            'version': '3.1.4',
        },
        'name': 'mpich-ub1804-cuda101-mpi314-gnugprof',
        'uri': 'docker://ethcscs/mpich:ub1804_cuda101_mpi314_gnugprof',
        'version': '3.1.4',
    },
    {
        'description': 'Open MPI from Debian 12 (4.1.4)',
        'name': 'modak-openmpi-4.1-cpu',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'openmpi',
                    'version': '4.1',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-openmpi-4.1.6-cpu',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'openmpi',
                    'version': '4.1.6',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-openmpi-5.0.5-cpu',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'openmpi',
                    'version': '5.0.5',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-openmpi-4.1.6-cuda12',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'openmpi',
                    'version': '4.1.6',
                },
            },
            'opt_build': {
                'acc_type': 'nvidia',
                'cpu_type': 'x86',
                'cuda_version': '12.2',
            },
        },
    },
    {
        'description': 'MPICH from Debian 12 (4.0.2)',
        'name': 'modak-mpich-4.0-cpu',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'mpich',
                    'version': '4.0',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'name': 'modak-mpich-4.1.2-cpu',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'mpich',
                    'version': '4.1.2',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'app': 'code-aster',
        'build': 'official',
        'kind': 'application',
        'legacy_code': 'code-aster-14.4-mpich-avx2',
        'name': 'code-aster-14.4-mpich-avx2',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'mpich',
                    'version': '3.3.1',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
    {
        'app': 'code-aster',
        'build': 'official',
        'kind': 'application',
        'legacy_code': 'code-aster-14.4-openmpi-avx2',
        'name': 'code-aster-14.4-openmpi-avx2',
        'recipe': {
            'app_type': 'hpc',
            'app_type-hpc': {
                'config': {
                    'parallelisation': 'mpi',
                },
                'parallelisation-mpi': {
                    'library': 'openmpi',
                    'version': '3.1.3',
                },
            },
            'opt_build': {
                'cpu_type': 'x86',
            },
        },
    },
]

RESOLVED = [
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-source',
            'compilers': [
                'xla',
            ],
            'framework': 'tensorflow',
            'isa': 'x86-64-v4',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '9675ef2d818d8d28db068255d2e07789c71acad5b3550c6d4ddd59215f2fd67b',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-tensorflow-2.15-cpu-v4',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-tensorflow': {
                        'version': '2.15.1',
                        'xla': True,
                    },
                    'config': {
                        'ai_framework': 'tensorflow',
                    },
                },
                'opt_build': {
                    'cpu_isa': 'x86-64-v4',
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-tensorflow-2.15.1-cpu-x86-64-v4:9675ef2d818d',
            'version': '2.15.1',
        },
        'name': 'modak-tensorflow-2.15.1-cpu-x86-64-v4',
        'sha256': '9675ef2d818d8d28db068255d2e07789c71acad5b3550c6d4ddd59215f2fd67b',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-source',
            'compilers': [
                'xla',
            ],
            'framework': 'tensorflow',
            'isa': 'x86-64-v3',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '41f688b282b580208f76e3f40f07efd9d46625a33dbcf64c26b891be47e91e40',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-tensorflow-2.15-cpu-v3',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-tensorflow': {
                        'version': '2.15.1',
                        'xla': True,
                    },
                    'config': {
                        'ai_framework': 'tensorflow',
                    },
                },
                'opt_build': {
                    'cpu_isa': 'x86-64-v3',
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-tensorflow-2.15.1-cpu-x86-64-v3:41f688b282b5',
            'version': '2.15.1',
        },
        'name': 'modak-tensorflow-2.15.1-cpu-x86-64-v3',
        'sha256': '41f688b282b580208f76e3f40f07efd9d46625a33dbcf64c26b891be47e91e40',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'compilers': [
                'xla',
            ],
            'framework': 'tensorflow',
            'isa': 'x86-64-v2',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '7ad8b362af559376747069238126b79d47e70f9f8862412f99757349d5cf235c',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-tensorflow-2.15-cpu',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-tensorflow': {
                        'version': '2.15.1',
                        'xla': True,
                    },
                    'config': {
                        'ai_framework': 'tensorflow',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-tensorflow-2.15.1-cpu-x86-64-v2:7ad8b362af55',
            'version': '2.15.1',
        },
        'name': 'modak-tensorflow-2.15.1-cpu-x86-64-v2',
        'sha256': '7ad8b362af559376747069238126b79d47e70f9f8862412f99757349d5cf235c',
    },
    None,
    None,
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'aarch64',
            'build': 'optimised-pip',
            'compilers': [
                'xla',
            ],
            'framework': 'tensorflow',
            'isa': 'armv8.0-a',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '77c949377cd80dd9ddae3cee359b1d5344ba3cf37690740876fad64886d38e4b',
            },
            'math': [
                'onednn',
            ],
            'name': 'modak-tensorflow-2.16-arm',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-tensorflow': {
                        'version': '2.16.1',
                        'xla': True,
                    },
                    'config': {
                        'ai_framework': 'tensorflow',
                    },
                },
                'opt_build': {
                    'cpu_type': 'arm',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-tensorflow-2.16.1-cpu-armv8.0-a:77c949377cd8',
            'version': '2.16.1',
        },
        'name': 'modak-tensorflow-2.16.1-cpu-armv8.0-a',
        'sha256': '77c949377cd80dd9ddae3cee359b1d5344ba3cf37690740876fad64886d38e4b',
    },
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    None,
    {
        'entry': {
            'accelerator': 'amd',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'framework': 'pytorch',
            'isa': 'x86-64-v2',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '7434aec31e7f56b205028f777da20b0b320306630959fd06bdd770b5d44b5f6f',
            },
            'math': [
                'miopen',
            ],
            'name': 'modak-pytorch-2.5-rocm6.1',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-pytorch': {
                        'version': '2.5.1',
                    },
                    'config': {
                        'ai_framework': 'pytorch',
                    },
                },
                'opt_build': {
                    'acc_type': 'amd',
                    'cpu_type': 'x86',
                    'rocm_version': '6.1',
                },
            },
            'rocm': '6.1',
            'uri': 'docker://localhost:5000/modak/modak-pytorch-2.5.1-rocm6.1-x86-64-v2:7434aec31e7f',
            'version': '2.5.1',
        },
        'name': 'modak-pytorch-2.5.1-rocm6.1-x86-64-v2',
        'sha256': '7434aec31e7f56b205028f777da20b0b320306630959fd06bdd770b5d44b5f6f',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'compilers': [
                'inductor',
            ],
            'framework': 'pytorch',
            'isa': 'x86-64-v2',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': 'c83536b6fa0bc573a1dc5c7a242b016be92f6862808ca997cc69e6b49fa2b59f',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-pytorch-2.5-cpu',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-pytorch': {
                        'compile': True,
                        'version': '2.5.1',
                    },
                    'config': {
                        'ai_framework': 'pytorch',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-pytorch-2.5.1-cpu-x86-64-v2:c83536b6fa0b',
            'version': '2.5.1',
        },
        'name': 'modak-pytorch-2.5.1-cpu-x86-64-v2',
        'sha256': 'c83536b6fa0bc573a1dc5c7a242b016be92f6862808ca997cc69e6b49fa2b59f',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-source',
            'compilers': [
                'inductor',
            ],
            'framework': 'pytorch',
            'isa': 'x86-64-v3',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': 'd618fad6ba81a2001bdf2e62bb322e36fe215743d22547d8ee4e6f45948519c3',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-pytorch-2.5-cpu-v3',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-pytorch': {
                        'compile': True,
                        'version': '2.5.1',
                    },
                    'config': {
                        'ai_framework': 'pytorch',
                    },
                },
                'opt_build': {
                    'cpu_isa': 'x86-64-v3',
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-pytorch-2.5.1-cpu-x86-64-v3:d618fad6ba81',
            'version': '2.5.1',
        },
        'name': 'modak-pytorch-2.5.1-cpu-x86-64-v3',
        'sha256': 'd618fad6ba81a2001bdf2e62bb322e36fe215743d22547d8ee4e6f45948519c3',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-source',
            'compilers': [
                'inductor',
            ],
            'cpu_features': [
                'amx_bf16',
                'amx_int8',
                'amx_tile',
                'avx512_bf16',
                'avx512_vnni',
            ],
            'framework': 'pytorch',
            'isa': 'x86-64-v4',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '34121b87717e2801c687eb65294440c990e3132fad1f0d99ff6abd003d336ecb',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-pytorch-2.5-cpu-amx',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-pytorch': {
                        'compile': True,
                        'version': '2.5.1',
                    },
                    'config': {
                        'ai_framework': 'pytorch',
                    },
                },
                'opt_build': {
                    'cpu_microarch': 'sapphirerapids',
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-pytorch-2.5.1-cpu-sapphirerapids:34121b87717e',
            'version': '2.5.1',
        },
        'name': 'modak-pytorch-2.5.1-cpu-sapphirerapids',
        'sha256': '34121b87717e2801c687eb65294440c990e3132fad1f0d99ff6abd003d336ecb',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'aarch64',
            'build': 'optimised-pip',
            'compilers': [
                'inductor',
            ],
            'framework': 'pytorch',
            'isa': 'armv8.0-a',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '92fb7733d78459c89bc566007d599e6ee95f028a6b37199e0863cd3f952343bf',
            },
            'math': [
                'onednn',
            ],
            'name': 'modak-pytorch-2.5-arm',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-pytorch': {
                        'compile': True,
                        'version': '2.5.1',
                    },
                    'config': {
                        'ai_framework': 'pytorch',
                    },
                },
                'opt_build': {
                    'cpu_type': 'arm',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-pytorch-2.5.1-cpu-armv8.0-a:92fb7733d784',
            'version': '2.5.1',
        },
        'name': 'modak-pytorch-2.5.1-cpu-armv8.0-a',
        'sha256': '92fb7733d78459c89bc566007d599e6ee95f028a6b37199e0863cd3f952343bf',
    },
    None,
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'framework': 'mxnet',
            'isa': 'x86-64-v2',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': 'edf2bc85dd32d7df898c5e8e61b88909e2e978e1143a9c79c77299e57c5ffa6d',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-mxnet-1.9.1-cpu',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-mxnet': {
                        'version': '1.9.1',
                    },
                    'config': {
                        'ai_framework': 'mxnet',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-mxnet-1.9.1-cpu-x86-64-v2:edf2bc85dd32',
            'version': '1.9.1',
        },
        'name': 'modak-mxnet-1.9.1-cpu-x86-64-v2',
        'sha256': 'edf2bc85dd32d7df898c5e8e61b88909e2e978e1143a9c79c77299e57c5ffa6d',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'compilers': [
                'xla',
            ],
            'framework': 'jax',
            'isa': 'x86-64-v2',
            'kind': 'framework',
            'labels': {
                'modak.recipe.sha256': '0c58c69876198e5d2f5356911ae06c80dd071d6775e4fe4f10af7ff199a84626',
            },
            'math': [
                'mkl',
                'onednn',
            ],
            'name': 'modak-jax-0.4.30-cpu',
            'recipe': {
                'app_type': 'ai_training',
                'app_type-ai_training': {
                    'ai_framework-jax': {
                        'version': '0.4.30',
                    },
                    'config': {
                        'ai_framework': 'jax',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-jax-0.4.30-cpu-x86-64-v2:0c58c6987619',
            'version': '0.4.30',
        },
        'name': 'modak-jax-0.4.30-cpu-x86-64-v2',
        'sha256': '0c58c69876198e5d2f5356911ae06c80dd071d6775e4fe4f10af7ff199a84626',
    },
    None,
    None,
    None,
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'description': 'Open MPI from Debian 12 (4.1.4)',
            'framework': 'openmpi',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': '0f4253bd1f81e9d6f5d6bedfabf1ee9af18c504364b557a2eb5674664c3aa470',
            },
            'mpi': {
                'library': 'openmpi',
                'version': '4.1.4',
            },
            'name': 'modak-openmpi-4.1-cpu',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'openmpi',
                        'version': '4.1',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-openmpi-4.1.4-x86-64-v2:0f4253bd1f81',
            'version': '4.1.4',
        },
        'name': 'modak-openmpi-4.1.4-x86-64-v2',
        'sha256': '0f4253bd1f81e9d6f5d6bedfabf1ee9af18c504364b557a2eb5674664c3aa470',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'framework': 'openmpi',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': '081948b16739ccf3a0b43a3845d128177512b729ac251e02a579f291dbfa7f65',
            },
            'mpi': {
                'library': 'openmpi',
                'version': '4.1.6',
            },
            'name': 'modak-openmpi-4.1.6-cpu',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'openmpi',
                        'version': '4.1.6',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-openmpi-4.1.6-x86-64-v2:081948b16739',
            'version': '4.1.6',
        },
        'name': 'modak-openmpi-4.1.6-x86-64-v2',
        'sha256': '081948b16739ccf3a0b43a3845d128177512b729ac251e02a579f291dbfa7f65',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'framework': 'openmpi',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': 'db4d13ebf97faa56725fc00e0d86e12deea85e65ecc1f98751966a27f721c88f',
            },
            'mpi': {
                'library': 'openmpi',
                'version': '5.0.5',
            },
            'name': 'modak-openmpi-5.0.5-cpu',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'openmpi',
                        'version': '5.0.5',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-openmpi-5.0.5-x86-64-v2:db4d13ebf97f',
            'version': '5.0.5',
        },
        'name': 'modak-openmpi-5.0.5-x86-64-v2',
        'sha256': 'db4d13ebf97faa56725fc00e0d86e12deea85e65ecc1f98751966a27f721c88f',
    },
    {
        'entry': {
            'accelerator': 'nvidia',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'cuda': '12.2',
            'framework': 'openmpi',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': 'b2d6f0e6f65c5e2d9e2bb59ad916ec784f5041deaa2972a7fa6e2e46ef6f73e5',
            },
            'mpi': {
                'library': 'openmpi',
                'version': '4.1.6',
            },
            'name': 'modak-openmpi-4.1.6-cuda12',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'openmpi',
                        'version': '4.1.6',
                    },
                },
                'opt_build': {
                    'acc_type': 'nvidia',
                    'cpu_type': 'x86',
                    'cuda_version': '12.2',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-openmpi-4.1.6-x86-64-v2:b2d6f0e6f65c',
            'version': '4.1.6',
        },
        'name': 'modak-openmpi-4.1.6-x86-64-v2',
        'sha256': 'b2d6f0e6f65c5e2d9e2bb59ad916ec784f5041deaa2972a7fa6e2e46ef6f73e5',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'description': 'MPICH from Debian 12 (4.0.2)',
            'framework': 'mpich',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': '698b0697647c322276a8416d0196fa91359768e9bbd224604af56e098ed93a4d',
            },
            'mpi': {
                'library': 'mpich',
                'version': '4.0.2',
            },
            'name': 'modak-mpich-4.0-cpu',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'mpich',
                        'version': '4.0',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-mpich-4.0.2-x86-64-v2:698b0697647c',
            'version': '4.0.2',
        },
        'name': 'modak-mpich-4.0.2-x86-64-v2',
        'sha256': '698b0697647c322276a8416d0196fa91359768e9bbd224604af56e098ed93a4d',
    },
    {
        'entry': {
            'accelerator': 'none',
            'arch': 'x86_64',
            'build': 'optimised-pip',
            'framework': 'mpich',
            'isa': 'x86-64-v2',
            'kind': 'mpi',
            'labels': {
                'modak.recipe.sha256': '3ecdb392f0c759c61b0b4bb116c6bf7c260c291e2fb1b84c340a0ed5a3f9859c',
            },
            'mpi': {
                'library': 'mpich',
                'version': '4.1.2',
            },
            'name': 'modak-mpich-4.1.2-cpu',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'mpich',
                        'version': '4.1.2',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-mpich-4.1.2-x86-64-v2:3ecdb392f0c7',
            'version': '4.1.2',
        },
        'name': 'modak-mpich-4.1.2-x86-64-v2',
        'sha256': '3ecdb392f0c759c61b0b4bb116c6bf7c260c291e2fb1b84c340a0ed5a3f9859c',
    },
    {
        'entry': {
            'accelerator': 'none',
            'app': 'code-aster',
            'arch': 'x86_64',
            'build': 'official',
            'framework': 'mpich',
            'isa': 'x86-64-v2',
            'kind': 'application',
            'labels': {
                'modak.recipe.sha256': '7cfdd2d38f5b24aa0824855e2c2b4bd869481761f036aa257b8b8567649483f5',
            },
            'legacy_code': 'code-aster-14.4-mpich-avx2',
            'mpi': {
                'library': 'mpich',
                'version': '3.3.1',
            },
            'name': 'code-aster-14.4-mpich-avx2',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'mpich',
                        'version': '3.3.1',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-mpich-3.3.1-x86-64-v2:7cfdd2d38f5b',
            'version': '3.3.1',
        },
        'name': 'modak-mpich-3.3.1-x86-64-v2',
        'sha256': '7cfdd2d38f5b24aa0824855e2c2b4bd869481761f036aa257b8b8567649483f5',
    },
    {
        'entry': {
            'accelerator': 'none',
            'app': 'code-aster',
            'arch': 'x86_64',
            'build': 'official',
            'framework': 'openmpi',
            'isa': 'x86-64-v2',
            'kind': 'application',
            'labels': {
                'modak.recipe.sha256': 'fe195cb57ec72c1d1d234d15a99337af90fddbff8c4f8837093b3d836aefd122',
            },
            'legacy_code': 'code-aster-14.4-openmpi-avx2',
            'mpi': {
                'library': 'openmpi',
                'version': '3.1.3',
            },
            'name': 'code-aster-14.4-openmpi-avx2',
            'recipe': {
                'app_type': 'hpc',
                'app_type-hpc': {
                    'config': {
                        'parallelisation': 'mpi',
                    },
                    'parallelisation-mpi': {
                        'library': 'openmpi',
                        'version': '3.1.3',
                    },
                },
                'opt_build': {
                    'cpu_type': 'x86',
                },
            },
            'uri': 'docker://localhost:5000/modak/modak-openmpi-3.1.3-x86-64-v2:fe195cb57ec7',
            'version': '3.1.3',
        },
        'name': 'modak-openmpi-3.1.3-x86-64-v2',
        'sha256': 'fe195cb57ec72c1d1d234d15a99337af90fddbff8c4f8837093b3d836aefd122',
    },
]
