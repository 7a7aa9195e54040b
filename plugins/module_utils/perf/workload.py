# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tuned application's side: how a configuration reaches the program.

A tuned application follows the argument convention of the schema's tuning description, the one the benchmark
workload (``benchmarks/workload/mnist_cnn.py``, whose docstring lists the flags) reads: threads travel as
``OMP_NUM_THREADS``, the other knobs as ``--batch-size N``, ``--precision fp32|bf16``, ``--compile``,
``--channels-last``, ``--onednn on|off`` and ``--cudnn-benchmark`` after the program's own arguments; only the
knobs the DSL tunes are passed. An epoch of that workload is ``EPOCH_SAMPLES`` samples (MNIST's training set).
"""

from __future__ import annotations

EPOCH_SAMPLES = 60000


def arguments(config, knobs):
    """Program arguments for the tuned knobs (threads travel as OMP_NUM_THREADS)."""
    argv = []
    if "batch_size" in knobs:
        argv.extend(["--batch-size", str(config["batch_size"])])
    if "precision" in knobs:
        argv.extend(["--precision", config["precision"]])
    if "compile" in knobs and config["compile"]:
        argv.append("--compile")
    if "channels_last" in knobs and config["channels_last"]:
        argv.append("--channels-last")
    if "onednn" in knobs:
        argv.extend(["--onednn", "on" if config["onednn"] else "off"])
    if "cudnn_benchmark" in knobs and config["cudnn_benchmark"]:
        argv.append("--cudnn-benchmark")
    return argv
