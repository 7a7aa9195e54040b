# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Report of a performance model: PNG plots (predicted vs measured, ranked configurations with their
90 % intervals) and a markdown summary with the LOCO errors of the model and of the linear baseline."""

from __future__ import annotations

import importlib.util
import io
import os

from ansible_collections.sodalite.modak.plugins.module_utils import files as outfiles
from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor as perf_model
from ansible_collections.sodalite.modak.plugins.module_utils.perf import store

# matplotlib loads only when plots are drawn; finding it costs no import
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _pyplot():
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    return plt


def summary(records, hw_class=None, load=0.0):
    """Plain data of the report: fit, LOCO of both kinds, ranking of the measured configurations."""
    fitted = perf_model.fit(records, "loglinear", hw_class)
    hw_class = fitted.hw_class
    own = [r for r in records if store.hardware_class(r.get("hardware")) == hw_class and store.valid(r)]
    loco = perf_model.loco(own, "loglinear", hw_class)
    baseline = perf_model.loco(own, "linear", hw_class)
    measured = perf_model.measured_summary(own)
    ranking = []
    for key, row in measured.items():
        value, low, high = fitted.interval(row["config"], load)
        ranking.append({"key": key, "config": row["config"], "predicted_s": value, "low_s": low, "high_s": high,
                        "measured_median_s": row["median_s"], "n": row["n"], "median_load": row["load"]})
    ranking.sort(key=lambda r: r["predicted_s"])
    points = [{"key": store.config_key(r["config"]), "measured_s": r["timing"]["per_sample_s"],
               "predicted_s": fitted.predict(r["config"], store.foreign_load(r))[0],
               "load": store.foreign_load(r)} for r in own]
    return {"hw_class": hw_class, "model": fitted.as_dict(), "loco": loco, "baseline_loco": baseline,
            "ranking": ranking, "points": points, "load": load}


def markdown(data):
    lines = ["# modak performance model report", "",
             "Hardware class: `%s`; %d runs of %d configurations." % (data["hw_class"], data["model"]["n_records"],
                                                                      data["model"]["n_configs"]), "",
             "| model | LOCO median error | LOCO mean error |", "|---|---|---|"]
    for name, loco in (("log-linear with interactions (Bayesian ridge)", data["loco"]),
                       ("linear on seconds (paper-style baseline)", data["baseline_loco"])):
        lines.append("| %s | %s | %s |" % (name, _pct(loco["median"]), _pct(loco["mean"])))
    lines += ["", "Configurations ranked by predicted time per sample at foreign load %.2f "
              "(90 %% interval; measured median over runs):" % data["load"], "",
              "| rank | configuration | predicted ms/sample | 90 % interval | measured ms/sample | runs |",
              "|---|---|---|---|---|---|"]
    for i, row in enumerate(data["ranking"]):
        lines.append("| %d | `%s` | %.3f | %.3f-%.3f | %.3f | %d |" % (
            i + 1, row["key"], 1e3 * row["predicted_s"], 1e3 * row["low_s"], 1e3 * row["high_s"],
            1e3 * row["measured_median_s"], row["n"]))
    lines += ["", "Multiplicative effects (exp of the log-linear coefficients):", ""]
    lines += ["- %s: x%.3f" % (k, v) for k, v in sorted(data["model"]["factors"].items())]
    return "\n".join(lines) + "\n"


def _pct(value):
    return "-" if value is None else "%.1f %%" % (100 * value)


NAMES = ("report.md", "predicted-vs-measured.png", "ranking.png")


def targets(directory, prefix="perf"):
    """The report's paths, checked before anything is written: the prefix is a plain file name (no '/',
    no '..') and no path may be a link (files.target_path)."""
    return [outfiles.target_path(directory, "%s-%s" % (prefix, name)) for name in NAMES]


def _png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    _pyplot().close(fig)
    return buffer.getvalue()


def plots(data, directory=None, prefix="perf"):
    """The two PNGs as {file name: bytes} (empty without matplotlib)."""
    if not HAS_MATPLOTLIB:
        return {}
    plt = _pyplot()
    paths = {}
    fig, ax = plt.subplots(figsize=(5.5, 5))
    meas = [1e3 * p["measured_s"] for p in data["points"]]
    pred = [1e3 * p["predicted_s"] for p in data["points"]]
    sc = ax.scatter(meas, pred, c=[p["load"] for p in data["points"]], cmap="viridis", s=18)
    lo, hi = min(meas + pred) * 0.9, max(meas + pred) * 1.1
    ax.plot([lo, hi], [lo, hi], "k--", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured ms per sample")
    ax.set_ylabel("predicted ms per sample")
    ax.set_title("log-linear model, LOCO median error %s" % _pct(data["loco"]["median"]))
    fig.colorbar(sc, label="foreign busy cores")
    fig.tight_layout()
    paths["%s-predicted-vs-measured.png" % prefix] = _png(fig)
    rows = data["ranking"]
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(rows) + 1.5))
    ys = list(range(len(rows)))[::-1]
    ax.errorbar([1e3 * r["predicted_s"] for r in rows], ys,
                xerr=[[1e3 * (r["predicted_s"] - r["low_s"]) for r in rows],
                      [1e3 * (r["high_s"] - r["predicted_s"]) for r in rows]], fmt="o", label="predicted, 90 %")
    ax.plot([1e3 * r["measured_median_s"] for r in rows], ys, "x", color="red", label="measured median")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["key"] for r in rows], fontsize=7)
    ax.set_xlabel("ms per sample (lower is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths["%s-ranking.png" % prefix] = _png(fig)
    return paths


def write(records, directory, prefix="perf", hw_class=None, load=0.0):
    """Write <prefix>-report.md and the PNGs into directory, each atomically; returns {summary, files}.

    Every path is checked before the first write; a failed run leaves the previous report intact."""
    outfiles.ensure_dir(directory)
    paths = targets(directory, prefix)
    data = summary(records, hw_class, load)
    images = plots(data, directory, prefix)
    text = markdown(data) + "".join("\n![%s](%s)\n" % (name, name) for name in images)
    written = [paths[0]]
    for path in paths[1:]:
        if os.path.basename(path) in images:
            outfiles.write_atomic(path, images[os.path.basename(path)], mode=0o644)
            written.append(path)
    outfiles.write_atomic(paths[0], text, mode=0o644)
    return {"summary": data, "files": written}
