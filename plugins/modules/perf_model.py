#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: perf_model
short_description: Fit, query and report modak's performance model of deployment configurations
version_added: 0.1.0
description:
  - Reads benchmark records (from the C(sodalite.modak.benchmark) role) out of a results store and fits a
    log-linear model of the time per training sample with physically motivated interactions (Bayesian ridge
    regression, so every prediction has an uncertainty), per hardware class.
  - O(action=fit) returns the fitted effects and the leave-one-configuration-out (LOCO) error of the model and
    of the paper-style linear baseline.
  - O(action=predict) returns the predicted time of one configuration with a 90 % interval.
  - O(action=report) writes PNG plots (predicted vs measured, ranked configurations) and a markdown summary.
options:
  store:
    description:
      - Path of the results store, SQLite (C(.sqlite), C(.db)) or JSON lines (C(.jsonl), C(.json)).
    type: path
    required: true
  action:
    description:
      - What to do.
    type: str
    choices: [fit, predict, report]
    default: fit
  hw_class:
    description:
      - Hardware class to fit, as the store names it (CPU model, architecture, cores, ISA flags).
      - Default is the class of the host running the module when the store has records of it, else the class
        with the most records.
    type: str
  kind:
    description:
      - C(loglinear) is modak's model; C(linear) is the baseline (least squares on seconds).
    type: str
    choices: [loglinear, linear]
    default: loglinear
  config:
    description:
      - The configuration to predict for O(action=predict), with keys C(threads), C(batch_size), C(precision)
        (fp32 or bf16), C(compile), C(channels_last), C(onednn); missing keys take the workload defaults.
    type: dict
  load:
    description:
      - Foreign CPU load (busy cores of other processes) to predict at.
    type: float
    default: 0.0
  output_dir:
    description:
      - Directory for the report files with O(action=report).
    type: path
  prefix:
    description:
      - File name prefix of the report files.
      - A plain file name (letters, digits, C(_), C(.) and C(-)); a prefix with C(/) or C(..) is refused.
        Each file is written atomically (a temporary file renamed into place) and never through a symbolic
        link, so a failed run leaves the previous report as it was.
    type: str
    default: perf
attributes:
  check_mode:
    support: full
    description: O(action=report) computes the report but writes no file.
  diff_mode:
    support: none
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
notes:
  - The LOCO error leaves out every run of one configuration, fits on the rest and predicts the runs left out;
    it is the honest error for a configuration that was never measured.
requirements:
  - numpy
  - scikit-learn
  - matplotlib (for the plots of O(action=report))
extends_documentation_fragment:
  - sodalite.modak.examples
author:
  - modak developers (@sodalite-modak)
"""

EXAMPLES = r"""
# results/bench.sqlite holds benchmark records of this host's hardware class, written by the benchmark role,
# autotune or optimise with results_store (docs/performance.md).
- name: Fit the model on this host's benchmark records
  sodalite.modak.perf_model:
    store: results/bench.sqlite
  register: fitted

- name: Predict one configuration
  sodalite.modak.perf_model:
    store: results/bench.sqlite
    action: predict
    config: {threads: 2, batch_size: 128, precision: bf16}

- name: Write plots and a summary
  sodalite.modak.perf_model:
    store: results/bench.sqlite
    action: report
    output_dir: results/report
"""

RETURN = r"""
hw_class:
  description: The hardware class the model was fitted for.
  returned: success
  type: str
  sample: "AMD EPYC|x86_64|2c|avx2+avx512_bf16+avx512f"
model:
  description: The fitted model (kind, number of runs and configurations, residual sd, multiplicative factors).
  returned: success
  type: dict
loco:
  description: Leave-one-configuration-out errors of the model (median, mean, per configuration).
  returned: when action is fit or report
  type: dict
baseline_loco:
  description: The same for the linear baseline.
  returned: when action is fit or report
  type: dict
prediction:
  description: Predicted seconds per sample, the 90 % interval and the estimated 60000-sample epoch time.
  returned: when action is predict
  type: dict
  sample: {s_per_sample: 0.00071, low_s: 0.00062, high_s: 0.00081, epoch_s: 42.6}
files:
  description: Report files written (or that would be written in check mode).
  returned: when action is report
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils.errors import PerfError
from ansible_collections.sodalite.modak.plugins.module_utils.module_support import require, run_and_exit
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor, store


def _hw_class(params, records):
    if params["hw_class"]:
        return params["hw_class"]
    here = store.hardware_class(store.local_hardware(sample_s=0.0))
    found = store.classes(records)
    if here in found:
        return here
    if not found:
        raise PerfError("the store %s holds no valid benchmark records" % params["store"])
    return max(found, key=found.get)


def run(module):
    params = module.params
    records = store.load(params["store"])
    hw_class = _hw_class(params, records)
    fitted = predictor.fit(records, params["kind"], hw_class)
    out = dict(changed=False, hw_class=hw_class, model=fitted.as_dict())
    if params["action"] == "predict":
        config = store.normalise_config(params["config"] or {})
        value, low, high = fitted.interval(config, params["load"])
        out["prediction"] = dict(config=config, s_per_sample=value, low_s=low, high_s=high,
                                 epoch_s=value * 60000, load=params["load"])
    elif params["action"] == "fit":
        out["loco"] = predictor.loco(records, params["kind"], hw_class)
        out["baseline_loco"] = predictor.loco(records, "linear", hw_class)
    else:
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import report
        if not params["output_dir"]:
            module.fail_json(msg="action=report needs output_dir")
        require(module, ("matplotlib", not report.HAS_MATPLOTLIB, None))
        names = report.targets(params["output_dir"], params["prefix"])
        data = report.summary(records, hw_class, params["load"])
        if not module.check_mode:
            names = report.write(records, params["output_dir"], params["prefix"], hw_class, params["load"])["files"]
        out.update(changed=True, files=names, loco=data["loco"], baseline_loco=data["baseline_loco"])
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            store=dict(type="path", required=True),
            action=dict(type="str", choices=["fit", "predict", "report"], default="fit"),
            hw_class=dict(type="str"),
            kind=dict(type="str", choices=["loglinear", "linear"], default="loglinear"),
            config=dict(type="dict"),
            load=dict(type="float", default=0.0),
            output_dir=dict(type="path"),
            prefix=dict(type="str", default="perf"),
        ),
        required_if=[("action", "predict", ("config",)), ("action", "report", ("output_dir",))],
        supports_check_mode=True,
    )
    require(module, ("scikit-learn", not predictor.HAS_SKLEARN, str(predictor.IMPORT_ERROR)))
    run_and_exit(module, run)


if __name__ == "__main__":
    main()
