"""The shape of benchmarks/results/containers.json (benchmarks/containers.py), checked without its numbers."""

from __future__ import annotations

import math

GROUPS = ("image", "same_training", "changes_training", "overhead", "graph_compiler", "control")
IMAGE_ARMS = ("bare", "official", "official_again", "modak_image", "bare_same_software", "compile", "resnet18_eager",
              "resnet18_compile")
RATIO_KEYS = ("median", "min", "max", "spread", "n", "runs", "reference", "arm", "ci90")


def _ratio(found, where, value):
    if not isinstance(value, dict) or any(k not in value for k in RATIO_KEYS):
        found.append("%s is not a ratio summary" % where)
    elif not (value["min"] <= value["median"] <= value["max"]) or value["n"] != len(value["runs"]):
        found.append("%s: min, median, max or n do not fit" % where)
    elif not value["min"] <= value["ci90"][0] <= value["ci90"][1] <= value["max"]:
        found.append("%s: the 90 %% interval of the median is not within the rounds" % where)


def problems(data):
    """What is wrong with the shape of a containers.json (empty when nothing)."""
    found = []
    if data.get("schema") != "modak-containers/2":
        return ["schema is %r" % data.get("schema")]
    for key in ("machine", "load", "method", "images", "settings", "arms", "comparisons", "goals", "goals_met",
                "paper", "smoke"):
        if key not in data:
            found.append("%s is missing" % key)
    if found:
        return found
    load = data["load"]
    for key in ("loadavg_start", "loadavg_end", "foreign_load_median", "foreign_load_max", "quiet"):
        if key not in load:
            found.append("load.%s is missing" % key)
    reps = data["method"]["reps"]
    for name in IMAGE_ARMS:
        if name not in data["arms"]:
            found.append("arm %s is missing" % name)
    for name, arm in data["arms"].items():
        if arm.get("group") not in GROUPS:
            found.append("arm %s has group %r" % (name, arm.get("group")))
        ms = arm.get("per_sample_ms") or {}
        if len(ms.get("runs", ())) != reps or not all(isinstance(v, float) and math.isfinite(v) and v > 0
                                                      for v in ms.get("runs", ())):
            found.append("arm %s does not have %d positive runs" % (name, reps))
        if len(arm.get("foreign_load", ())) != reps or len(arm.get("loadavg", ())) != reps:
            found.append("arm %s does not record the load of every run" % name)
    c = data["comparisons"]
    _ratio(found, "image_alone.modak_vs_official", c["image_alone"]["modak_vs_official"])
    _ratio(found, "image_alone.official_vs_bare", c["image_alone"]["official_vs_bare"])
    _ratio(found, "overhead.modak_image_vs_bare_same_software", c["overhead"]["modak_image_vs_bare_same_software"])
    _ratio(found, "overhead.focused", c["overhead"]["focused"])
    if c["overhead"]["focused"]["n"] != reps + data["method"]["overhead_rounds"]:
        found.append("overhead.focused does not pair every round and overhead round")
    _ratio(found, "control.official_vs_official_again", c["control"]["official_vs_official_again"])
    _ratio(found, "modak_vs_official", c["modak_vs_official"])
    for group in ("same_training", "changes_training"):
        for name, value in c[group].items():
            _ratio(found, "%s.%s" % (group, name), value)
            if data["arms"][name]["group"] != group:
                found.append("%s lists arm %s of group %s" % (group, name, data["arms"][name]["group"]))
    allowed = set(c["changes_training_allowed"])
    if c["changes_training"] and not allowed:
        found.append("arms that change the training ran though the DSL's tuning allows none")
    for model in ("mnist_cnn", "resnet18"):
        row = c["graph_compiler"].get(model)
        if not row or row.get("faster") not in ("compile", "eager", "neither") or not isinstance(row.get("prediction_right"), bool):
            found.append("graph_compiler.%s is missing or incomplete" % model)
    if "contains" not in c["prediction_interval"]:
        found.append("prediction_interval.contains is missing")
    if set(data["goals_met"]) != set(data["goals"]) | {"prediction_interval_contains_measured"}:
        found.append("goals_met does not answer every goal")
    return found
