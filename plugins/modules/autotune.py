#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: autotune
short_description: Autotune a DSL's run settings by benchmarking its application inside the DSL's search space
version_added: 0.1.0
description:
  - For a DSL with C(optimisation.enable_autotuning=true) and an C(optimisation.tuning) search space, runs the
    application on this host with real configurations chosen by modak's sequential model-based search
    (default and its one-knob neighbours first, then the configuration with the largest expected improvement,
    until another run is not expected to pay or the budget is spent), appends one record per run to the
    results store and returns the chosen configuration.
  - The application follows the argument convention of the schema's tuning description (the benchmark
    workload C(benchmarks/workload/mnist_cnn.py) does) - C(OMP_NUM_THREADS), C(--batch-size), C(--precision),
    C(--compile), C(--channels-last), C(--onednn) after its own arguments - and prints one JSON record with
    C(timing.per_sample_s) and C(load.other_busy_cores) as its last JSON line.
  - Records already in the store for this host's hardware class count as measured, so a second call
    continues the search. C(sodalite.modak.optimise) with the same O(results_store) then uses the records.
  - In check mode nothing runs; the planned first runs are returned.
options:
  dsl:
    description:
      - The DSL document as data. Exactly one of O(dsl) and O(dsl_file) is required.
    type: dict
  dsl_file:
    description:
      - Path of the DSL document (YAML or JSON). Exactly one of O(dsl) and O(dsl_file) is required.
    type: path
  results_store:
    description:
      - Results store the runs are appended to (SQLite C(.sqlite), or JSON lines C(.jsonl)); created when missing.
    type: path
    required: true
  interpreter:
    description:
      - Python interpreter that replaces an application executable named C(python) or C(python3)
        (an interpreter with the application's dependencies, e.g. the playbook's own).
    type: path
  chdir:
    description:
      - Working directory of the runs (relative program paths of the DSL resolve against it).
    type: path
  extra_args:
    description:
      - Arguments put between the DSL's arguments and the tuned knobs (e.g. a short step count for a quick search).
    type: list
    elements: str
    default: []
  max_runs:
    description:
      - Most configurations this search measures; 0 means the default (a third of the search space, at least 2).
    type: int
    default: 0
  min_gain:
    description:
      - Smallest expected fractional improvement worth another run.
    type: float
    default: 0.02
  timeout:
    description:
      - Seconds one run may take.
    type: int
    default: 900
  force:
    description:
      - Tune even when the DSL does not set C(optimisation.enable_autotuning).
    type: bool
    default: false
  run_prefix:
    description:
      - The command the job script runs the application under, e.g. a container runtime's run command for the
        image C(sodalite.modak.optimise) chose (C([ch-run, --set-env, IMAGE, --])), so that the search measures
        where the job will run. With it, O(interpreter) is not applied.
    type: list
    elements: str
    default: []
  environment:
    description:
      - Variables the job script sets for the application (besides C(OMP_NUM_THREADS), which each run sets).
    type: dict
    default: {}
  image:
    description:
      - The image reference the runs go through (the one optimise chose). Records are stored with it, and
        C(sodalite.modak.optimise) counts only runs measured in the image it chooses (runs without it count
        only for a job without a container).
    type: str
  repeats:
    description:
      - Runs of each configuration measured. A choice other than the framework default is kept only when its
        runs beat the default's by more than the noise they show (at least 2 runs of each); the budget
        O(max_runs) counts configurations, so it covers the repeats.
    type: int
    default: 3
  confirm:
    description:
      - When the search ends on a configuration other than the framework default, this many rounds run the
        default and that choice alternately (the default first in even rounds, the choice first in odd ones),
        and the choice is kept only when these interleaved runs show it faster beyond their noise (Welch's
        one-sided test on log time at 95 %, Student's t quantile). Runs made in blocks, one configuration after
        another, can differ by the machine's drift alone.
      - An even number balances the order (each configuration first equally often). Fewer than 2 rounds leave too
        few interleaved runs to decide on; the decision then uses every run of the two (the store's included).
        Confirmation runs of earlier calls count there as ordinary runs; C(sodalite.modak.optimise) counts every
        confirmation of the pair in the store.
    type: int
    default: 4
requirements:
  - PyYAML
  - jsonschema >= 4
  - numpy
  - scikit-learn
extends_documentation_fragment:
  - sodalite.modak.site
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
# A task of a playbook in the playbooks/ folder of a modak checkout (chdir is the checkout, where the DSL's
# benchmarks/workload/mnist_cnn.py is), the Python of ansible-playbook holding torch
# (pip install -r benchmarks/requirements-bench.txt).
- name: Autotune the benchmark workload's DSL with short runs
  sodalite.modak.autotune:
    dsl_file: examples/pytorch-mnist-tuning-local.yaml
    results_store: benchmarks/results/autotune.sqlite
    interpreter: "{{ ansible_playbook_python }}"
    chdir: "{{ playbook_dir }}/.."
    extra_args: [--steps, "4", --warmup, "1"]
  register: tuned

# Needs Charliecloud's ch-run on the host, the image unpacked in /var/tmp/images/modak-pytorch, and mnist.yaml with
# its application in /scratch/mnist.
- name: Autotune inside the image the job runs in (Charliecloud), three runs of each configuration
  sodalite.modak.autotune:
    dsl_file: mnist.yaml
    results_store: results.sqlite
    chdir: /scratch/mnist
    run_prefix: [ch-run, --set-env, -b, /scratch/mnist, -c, /scratch/mnist, /var/tmp/images/modak-pytorch, --]
    image: docker://localhost:5000/modak/modak-pytorch-2.13.0-cpu-x86-64-v2:f6956a6253ce
    repeats: 3
    confirm: 4
"""

RETURN = r"""
choice:
  description:
    - The chosen configuration (threads, batch_size, precision, channels_last, compile, onednn).
    - The framework default unless the search's best beat it by more than the noise (RV(kept), RV(decision)).
  returned: success
  type: dict
model_choice:
  description: The configuration the search ranked first (kept as RV(choice) only when it beat the default).
  returned: success
  type: dict
kept:
  description: Whether the search's best configuration beat the default by more than the noise and is the choice.
  returned: success
  type: bool
decision:
  description: Why the choice is the search's best or the framework default, with the measured ratio and runs.
  returned: success
  type: str
choice_key:
  description: Short name of the chosen configuration.
  returned: success
  type: str
  sample: t1-b128-bf16-cl0-c0-dnn1
args:
  description: Program arguments of the chosen configuration (threads travel as OMP_NUM_THREADS, see RV(env)).
  returned: success
  type: list
  elements: str
env:
  description: Environment of the chosen configuration.
  returned: success
  type: dict
runs:
  description: Runs of the application made by this call (the confirmation rounds' included).
  returned: success
  type: int
confirm_runs:
  description: Runs made in the interleaved confirmation rounds (0 when the search ended on the default).
  returned: success
  type: int
measured:
  description: One line per run of this call (configuration, seconds per sample, foreign load).
  returned: success
  type: list
  elements: str
stop_reason:
  description: Why the search stopped.
  returned: success
  type: str
predicted_s_per_sample:
  description: Model prediction for the choice at the foreign load seen during the search.
  returned: success
  type: float
load:
  description: Foreign load (busy cores of other processes) the choice was ranked at.
  returned: success
  type: float
default:
  description: The default configuration (framework defaults) the search started from.
  returned: success
  type: dict
candidates:
  description: Size of the search space on this host.
  returned: success
  type: int
hw_class:
  description: Hardware class of this host, the one the records and the model belong to.
  returned: success
  type: str
previous_records:
  description: Records of this hardware class that were already in the store (they count as measured).
  returned: success
  type: int
steps:
  description: The runs of this call in order, each with its phase (initial or model) and, for model runs, the
    expected gain that chose it.
  returned: success
  type: list
  elements: dict
planned:
  description: In check mode, the configurations the search would run first.
  returned: check mode
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import dsl_libraries, require, run_and_exit
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, search, store, tune, workload


def run(module):
    params = module.params
    document = params["dsl"] if params["dsl"] is not None else dsl.load_file(params["dsl_file"])
    request = dsl.parse(document, site_profile.of_task(params))
    if request.opt is None or not (request.opt.enable_autotuning or params["force"]):
        module.fail_json(msg="the DSL does not set optimisation.enable_autotuning: true (use force to tune anyway)")
    if not request.opt.tuning:
        module.fail_json(msg="the DSL has no optimisation.tuning search space to tune in")
    host = store.local_hardware()
    knobs = sorted(dict(request.opt.tuning))
    if module.check_mode:
        candidates, base = tune.candidates_for(request, host)
        planned = [store.config_key(c) for c in search.initial_design(candidates, base)]
        return dict(changed=False, runs=0, planned=planned, default=base, candidates=len(candidates), hw_class=store.hardware_class(host))
    log = []
    chdir = params["chdir"] or (os.path.dirname(os.path.abspath(params["dsl_file"])) if params["dsl_file"] else None)
    result = tune.autotune_request(request, params["results_store"], host, params["interpreter"], chdir,
                                   params["extra_args"], params["max_runs"], params["min_gain"], params["timeout"],
                                   log, run_prefix=params["run_prefix"],
                                   environment=dict((str(k), str(v)) for k, v in params["environment"].items()),
                                   image=params["image"], repeats=params["repeats"],
                                   confirm=params["confirm"])
    choice = result["choice"]
    return dict(changed=result["runs"] > 0, choice=choice, choice_key=store.config_key(choice),
                model_choice=result.get("model_choice", choice), kept=result["kept"], decision=result["decision"],
                args=workload.arguments(choice, knobs), env={"OMP_NUM_THREADS": str(choice["threads"])},
                runs=result["runs"], confirm_runs=result["confirm_runs"], measured=log,
                stop_reason=result["stop_reason"],
                predicted_s_per_sample=result["predicted_s"], load=result["load"], default=result["default"],
                candidates=len(result["candidates"]), hw_class=result["hw_class"],
                previous_records=result["previous_records"], steps=result["steps"])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dsl=dict(type="dict"),
            dsl_file=dict(type="path"),
            results_store=dict(type="path", required=True),
            interpreter=dict(type="path"),
            chdir=dict(type="path"),
            extra_args=dict(type="list", elements="str", default=[]),
            max_runs=dict(type="int", default=0),
            min_gain=dict(type="float", default=0.02),
            timeout=dict(type="int", default=900),
            force=dict(type="bool", default=False),
            run_prefix=dict(type="list", elements="str", default=[]),
            environment=dict(type="dict", default={}),
            image=dict(type="str"),
            repeats=dict(type="int", default=3),
            confirm=dict(type="int", default=4),
            **site_profile.TASK_OPTIONS
        ),
        required_one_of=[("dsl", "dsl_file")],
        mutually_exclusive=[("dsl", "dsl_file")] + site_profile.TASK_EXCLUSIVE,
        supports_check_mode=True,
    )
    require(module, *dsl_libraries() + (("scikit-learn", not predictor.HAS_SKLEARN, str(predictor.IMPORT_ERROR)),))
    run_and_exit(module, run)


if __name__ == "__main__":
    main()
