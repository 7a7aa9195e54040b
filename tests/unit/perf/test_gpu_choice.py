"""modak chooses on GPUs: the GPU's hardware class, the cuDNN autotuning knob, the rules' fallback for GPUs, and an
autotune that starts from the rules' choice and measures at most a third of the space."""

from __future__ import annotations

from helpers import ai_doc, with_

from ansible_collections.sodalite.modak.plugins.module_utils import dsl
from ansible_collections.sodalite.modak.plugins.module_utils.perf import hardware, predictor, search, store, workload

SMI = "NVIDIA H100 80GB HBM3, 81559, 9.0\nNVIDIA H100 80GB HBM3, 81559, 9.0\n"
H100 = {"name": "NVIDIA H100 80GB HBM3", "memory_gib": 80, "compute_capability": "9.0"}
V100 = {"name": "Tesla V100-SXM2-32GB", "memory_gib": 32, "compute_capability": "7.0"}
CPU = {"model": "Intel Xeon", "arch": "x86_64", "cores": 16, "usable_cores": 16, "flags": ["avx2"]}
RESNET_GRID = {"batch_size": [32, 256], "precision": ["fp32", "bf16"], "channels_last": [False, True],
               "cudnn_benchmark": [False, True]}


def test_nvidia_smi_lines_become_gpu_facts_and_a_class():
    gpus = hardware.parse_gpus(SMI + "garbage line\n, 1, 2\n")
    assert gpus == [H100, H100]
    host = hardware.facts(cpuinfo="model name\t: Intel Xeon\nflags\t: avx2\n", machine="x86_64", cores=16,
                          usable_cores=16, gpus=gpus)
    assert host["gpus"] == gpus
    assert store.hardware_class(host) == "Intel Xeon|x86_64|16c|avx2|2x NVIDIA H100 80GB HBM3 cc9.0 80G"


def test_a_host_without_gpus_keeps_its_class():
    host = hardware.facts(cpuinfo="model name\t: Intel Xeon\nflags\t: avx2\n", machine="x86_64", cores=16,
                          usable_cores=16, gpus=[])
    assert "gpus" not in host
    assert store.hardware_class(host) == "Intel Xeon|x86_64|16c|avx2"


def test_the_cudnn_knob_leaves_earlier_keys_as_they_were():
    old = {"threads": 2, "batch_size": 64, "precision": "fp32", "channels_last": False, "compile": False,
           "onednn": True}
    assert store.config_key(old) == "t2-b64-fp32-cl0-c0-dnn1"
    assert store.config_key(dict(old, cudnn_benchmark=True)) == "t2-b64-fp32-cl0-c0-dnn1-cudnnb1"
    assert workload.arguments(dict(store.normalise_config(old), cudnn_benchmark=True),
                              {"cudnn_benchmark": [False, True]}) == ["--cudnn-benchmark"]
    x = predictor.feature_vector(dict(old, cudnn_benchmark=True))
    assert x[predictor.LOGLINEAR_FEATURES.index("cudnn_benchmark")] == 1.0
    assert predictor.LOGLINEAR_FEATURES.index("cudnn_benchmark") in predictor.MAIN_COLUMNS


def _rules(gpu, conv):
    host = dict(CPU, gpus=[gpu])
    base = store.normalise_config({"threads": 16, "batch_size": 32})
    return search.rules(search.space(RESNET_GRID, base), base, host, (), conv)


def test_gpu_rules_bf16_where_the_gpu_has_it_channels_last_and_cudnn_for_convolutions_compile_off():
    chosen, notes = _rules(H100, conv=True)
    assert (chosen["precision"], chosen["channels_last"], chosen["cudnn_benchmark"], chosen["compile"]) == \
        ("bf16", True, True, False)
    assert chosen["batch_size"] == 32, "the rules leave the batch size (the training) as asked"
    assert any("compile only where measured" in note for note in notes)
    chosen, _notes = _rules(H100, conv=False)
    assert (chosen["precision"], chosen["channels_last"], chosen["cudnn_benchmark"]) == ("bf16", False, False)
    chosen, _notes = _rules(V100, conv=True)
    assert (chosen["precision"], chosen["channels_last"], chosen["cudnn_benchmark"]) == ("fp32", False, True)


def test_cpu_rules_never_turn_gpu_knobs_on():
    base = store.normalise_config({"threads": 2})
    chosen, _notes = search.rules(search.space(RESNET_GRID, base), base, dict(CPU, flags=["amx_bf16"]), (), True)
    assert chosen["precision"] == "bf16" and not chosen["channels_last"] and not chosen["cudnn_benchmark"]


def test_autotune_starts_at_the_rules_choice_and_measures_a_third():
    base = store.normalise_config({"threads": 16, "batch_size": 32})
    candidates = search.space(RESNET_GRID, base)
    start, _notes = _rules(H100, conv=True)
    design = [store.config_key(c) for c in search.initial_design(candidates, base, start)]
    assert design[:3] == [store.config_key(base), store.config_key(start),
                          store.config_key(dict(start, batch_size=256))]
    assert len(design) == len(set(design))
    assert search.default_budget(candidates) == 5 and search.default_budget(candidates[:4]) == 2
    host = dict(CPU, gpus=[H100])
    # a GPU where bf16, channels-last, cuDNN autotuning and a larger batch each help
    factor = {"batch_size": {32: 1.0, 256: 0.6}, "precision": {"fp32": 1.0, "bf16": 0.5},
              "channels_last": {False: 1.0, True: 0.8}, "cudnn_benchmark": {False: 1.0, True: 0.95}}
    seen = []

    def measure(config):
        seen.append(store.config_key(config))
        t = 1e-3
        for knob, values in factor.items():
            t *= values[config[knob]]
        return [{"config": config, "hardware": host, "timing": {"per_sample_s": t * s}, "ok": True}
                for s in (0.99, 1.01)]

    result = search.autotune(candidates, measure, base, hw_class=store.hardware_class(host), start=start)
    assert result["configs_run"] <= len(candidates) // 3 and len(seen) == result["configs_run"]
    assert store.config_key(result["choice"]) == store.config_key(dict(start, batch_size=256))


def test_the_dsl_names_the_cudnn_knob_and_the_model_kind():
    doc = with_(ai_doc("pytorch"), "job.optimisation.tuning", {"cudnn_benchmark": [False, True]})
    doc = with_(doc, "job.optimisation.app_type-ai_training.config.type", "cnn")
    request = dsl.parse(doc)
    assert dict(request.opt.tuning)["cudnn_benchmark"] == (False, True)
    assert request.opt.model_kind == "cnn" and search.convolutional(request.opt.model_kind)
    assert not search.convolutional("transformer") and not search.convolutional(None)
