# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Performance model: log(seconds per sample) from the deployment knobs, per hardware class.

* ``loglinear`` (the model modak uses): Bayesian ridge regression on log time with the knobs
  (log2 threads, log2 batch, bf16, compile, channels_last, oneDNN off, cuDNN autotuning), the foreign CPU load, the
  oversubscription max(0, threads - (cores - load)) (threads that find no free core: an OpenMP team
  waits at every barrier for the thread whose core is taken) and a few physically motivated
  interactions: log batch x log threads (bigger batches parallelise better), bf16 x batch (less
  arithmetic per sample), compile x bf16 and compile x threads (inductor fuses only the pointwise part),
  oneDNN off x bf16 (bf16 without oneDNN falls back to slow kernels). The posterior gives an
  uncertainty for every prediction; effects are multiplicative factors.
* ``linear``: the paper-style baseline, ordinary least squares on seconds with the raw knobs.

Leave-one-configuration-out (LOCO) error is the honest test for an unmeasured configuration.
"""

from __future__ import annotations

import importlib.util
import math

from ansible_collections.sodalite.modak.plugins.module_utils.errors import PerfError
from ansible_collections.sodalite.modak.plugins.module_utils.perf import stats, store

# numpy and scikit-learn (about a second to import) load on the first fit, never for a plain optimise;
# finding them costs no import.
HAS_SKLEARN = all(importlib.util.find_spec(name) is not None for name in ("numpy", "sklearn"))
IMPORT_ERROR = None if HAS_SKLEARN else "numpy and scikit-learn are not installed on the host that runs the module"

KINDS = ("loglinear", "linear")
Z90 = 1.645

LOGLINEAR_FEATURES = (
    "log2_threads", "log2_batch", "bf16", "compile", "channels_last", "onednn_off", "load",
    "oversubscribed_threads", "cudnn_benchmark", "log2_batch_x_log2_threads", "bf16_x_log2_batch",
    "compile_x_bf16", "compile_x_log2_threads", "onednn_off_x_bf16",
)
# the main effects plus the oversubscription; interactions join once enough configurations were measured
MAIN_COLUMNS = tuple(range(9))
MIN_CONFIGS_FOR_INTERACTIONS = 10
LINEAR_FEATURES = ("threads", "batch_size", "bf16", "compile", "channels_last", "onednn_off", "load",
                   "cudnn_benchmark")


def oversubscription(threads, cores, load):
    """Threads that find no free core: max(0, threads - (cores - foreign load))."""
    if not cores:
        return 0.0
    return max(0.0, float(threads) - (float(cores) - max(0.0, float(load or 0.0))))


def feature_vector(config, load=0.0, kind="loglinear", cores=None):
    """The features of one run. ``cores``: usable cores of the machine (None: the configuration's threads,
    i.e. no oversubscription unless the load takes cores)."""
    c = store.normalise_config(config)
    bf16 = 1.0 if c["precision"] == "bf16" else 0.0
    comp = 1.0 if c["compile"] else 0.0
    cl = 1.0 if c["channels_last"] else 0.0
    off = 0.0 if c["onednn"] else 1.0
    cudnn = 1.0 if c["cudnn_benchmark"] else 0.0
    load = max(0.0, float(load or 0.0))
    if kind == "linear":
        return [float(c["threads"]), float(c["batch_size"]), bf16, comp, cl, off, load, cudnn]
    lt = math.log(c["threads"], 2)
    lb = math.log(c["batch_size"], 2) - 6.0   # centred on batch 64
    over = oversubscription(c["threads"], cores if cores else c["threads"], load)
    return [lt, lb, bf16, comp, cl, off, load, over, cudnn, lb * lt, bf16 * lb,
            comp * bf16, comp * lt, off * bf16]


class PerfModel(object):
    """A fitted model for one hardware class."""

    def __init__(self, kind, hw_class, estimator, n_records, n_configs, residual_sd, columns=None, cores=None):
        self.kind = kind
        self.cores = cores
        self.columns = columns
        self.hw_class = hw_class
        self.estimator = estimator
        self.n_records = n_records
        self.n_configs = n_configs
        self.residual_sd = residual_sd

    def predict(self, config, load=0.0, epistemic=False):
        """(seconds per sample, sd of log time) for a configuration at a foreign load.

        The sd is the predictive one (model uncertainty and run-to-run noise), or with ``epistemic``
        only the uncertainty of the mean, which is what another benchmark run can reduce.
        """
        import numpy as np  # pylint: disable=import-outside-toplevel  # loaded by fit() already
        x = np.array([feature_vector(config, load, self.kind, self.cores)])
        if self.kind == "linear":
            value = float(self.estimator.predict(x)[0])
            return max(value, 1e-9), self.residual_sd
        if self.columns is not None:
            x = x[:, list(self.columns)]
        mean, sd = self.estimator.predict(x, return_std=True)
        sd = float(sd[0])
        if epistemic:
            sd = math.sqrt(max(0.0, sd * sd - 1.0 / float(self.estimator.alpha_)))
        return float(math.exp(mean[0])), sd

    def interval(self, config, load=0.0, z=Z90):
        value, sd = self.predict(config, load)
        if self.kind == "linear":
            return value, value * math.exp(-z * sd), value * math.exp(z * sd)
        return value, value * math.exp(-z * sd), value * math.exp(z * sd)

    def factors(self):
        """exp(coefficient) per feature of the log-linear model (multiplicative effects)."""
        if self.kind != "loglinear":
            return dict(zip(LINEAR_FEATURES, [float(v) for v in self.estimator.coef_]))
        names = [LOGLINEAR_FEATURES[i] for i in (self.columns or range(len(LOGLINEAR_FEATURES)))]
        return dict((name, float(math.exp(v))) for name, v in zip(names, self.estimator.coef_))

    def as_dict(self):
        return {"kind": self.kind, "hw_class": self.hw_class, "n_records": self.n_records,
                "n_configs": self.n_configs, "cores": self.cores, "residual_sd": self.residual_sd,
                "factors": self.factors(),
                "interactions": self.kind == "loglinear" and self.columns is None}


def usable_cores(records):
    """The usable cores of the machine the records come from (one hardware class: one value)."""
    for record in records:
        hardware = record.get("hardware") or {}
        cores = hardware.get("usable_cores") or hardware.get("cores")
        if isinstance(cores, int) and cores > 0:
            return cores
    return None


def _xy(records, kind):
    import numpy as np  # pylint: disable=import-outside-toplevel
    rows = [r for r in records if store.valid(r)]
    cores = usable_cores(rows)
    x = np.array([feature_vector(r["config"], store.foreign_load(r), kind, cores) for r in rows])
    t = np.array([float(r["timing"]["per_sample_s"]) for r in rows])
    return rows, x, (t if kind == "linear" else np.log(t))


def fit(records, kind="loglinear", hw_class=None):
    """Fit one model on records of one hardware class (the first class present when not given)."""
    if not HAS_SKLEARN:
        raise ImportError("numpy and scikit-learn are required: %s" % IMPORT_ERROR)
    import numpy as np  # pylint: disable=import-outside-toplevel
    from sklearn.linear_model import BayesianRidge, LinearRegression  # pylint: disable=import-outside-toplevel
    if kind not in KINDS:
        raise PerfError("unknown model kind %r" % kind)
    if hw_class is None:
        found = store.classes(records)
        if not found:
            raise PerfError("no valid benchmark records to fit")
        hw_class = max(found, key=found.get)
    own = [r for r in records if store.hardware_class(r.get("hardware")) == hw_class]
    rows, x, y = _xy(own, kind)
    if len(rows) < 2:
        raise PerfError("at least 2 valid records are needed for hardware class %s" % hw_class)
    n_configs = len(set(store.config_key(r["config"]) for r in rows))
    columns = None
    if kind == "linear":
        estimator = LinearRegression().fit(x, y)
        resid = np.log(np.maximum(estimator.predict(x), 1e-9)) - np.log(y)
    else:
        if n_configs < MIN_CONFIGS_FOR_INTERACTIONS:
            columns = MAIN_COLUMNS
            x = x[:, list(columns)]
        estimator = BayesianRidge(fit_intercept=True, compute_score=False).fit(x, y)
        resid = estimator.predict(x) - y
    dof = max(1, len(rows) - 1)
    sd = float(math.sqrt(float(np.sum(resid ** 2)) / dof))
    return PerfModel(kind, hw_class, estimator, len(rows), n_configs, sd, columns, usable_cores(rows))


def by_config(records):
    """{config_key: [records]} for valid records."""
    groups = {}
    for record in records:
        if store.valid(record):
            groups.setdefault(store.config_key(record["config"]), []).append(record)
    return groups


def loco(records, kind="loglinear", hw_class=None):
    """Leave-one-configuration-out errors: fit without a configuration, predict its runs.

    The error of a configuration is |geometric mean of predictions / geometric mean of measurements - 1|,
    with each prediction made at the foreign load its run saw. Returns per-configuration errors and the
    median and mean over configurations.
    """
    if hw_class is None:
        found = store.classes(records)
        hw_class = max(found, key=found.get) if found else None
    own = [r for r in records if store.hardware_class(r.get("hardware")) == hw_class]
    groups = by_config(own)
    errors = {}
    for key, held in sorted(groups.items()):
        rest = [r for k, rs in groups.items() if k != key for r in rs]
        if len(rest) < 2:
            continue
        model = fit(rest, kind, hw_class)
        pred = [math.log(model.predict(r["config"], store.foreign_load(r))[0]) for r in held]
        meas = [math.log(float(r["timing"]["per_sample_s"])) for r in held]
        errors[key] = abs(math.exp(sum(pred) / len(pred) - sum(meas) / len(meas)) - 1.0)
    values = sorted(errors.values())
    return {"kind": kind, "hw_class": hw_class, "errors": errors, "n_configs": len(values),
            "median": stats.median(values) if values else None,
            "mean": sum(values) / len(values) if values else None}


def measured_summary(records):
    """{config_key: {config, n, median_s, load}} over valid records (per-sample seconds)."""
    out = {}
    for key, rows in by_config(records).items():
        times = sorted(float(r["timing"]["per_sample_s"]) for r in rows)
        out[key] = {"config": store.normalise_config(rows[0]["config"]), "n": len(rows),
                    "median_s": stats.median(times),
                    "load": stats.median(sorted(store.foreign_load(r) for r in rows))}
    return out
