# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run-time model: how long a whole run of an application takes on a partition's hardware, at a node count,
with a 90 % interval, from the runs recorded there; what placement (placement.py) compares partitions by.

A run record sits in the results store beside the benchmark records (``run_record`` builds one)::

    {"application": "spin", "hardware": {...the node's facts...},
     "job_run": {"elapsed_s": 24.1, "nodes": 1, "partition": "slow"}}

The runs of one place form a group: those of a hardware class when the candidate names one (runs on other
partitions of the same class count), else those recorded on the partition. The model is

    log elapsed = a_g + b * log(nodes)

one level a_g per group and one node-scaling exponent b shared by the groups (elapsed ~ nodes^b; b = -1: twice the
nodes, half the time), fitted by least squares within the groups, so that b comes only from groups measured at
several node counts. Without such a group b is 0 and the prediction holds for the node counts measured (the notes
say so). The residual sd is pooled over the groups; the interval is Student's t prediction interval on log time, so
it widens with few runs and is absent with no degree of freedom left. Plain Python: no numpy for a placement.
"""

from __future__ import annotations

import math

from ansible_collections.sodalite.modak.plugins.module_utils.perf import stats, store


def run_record(application, elapsed_s, nodes=1, partition=None, hardware=None, started_at=None):
    """A run record: ``application`` as store.application_key names it, the run's elapsed seconds and nodes, the
    partition it ran on and the facts of its nodes (hardware.facts())."""
    record = {"application": application, "job_run": {"elapsed_s": float(elapsed_s), "nodes": int(nodes)}}
    if partition:
        record["job_run"]["partition"] = partition
    if hardware:
        record["hardware"] = dict(hardware)
    if started_at:
        record["started_at"] = started_at
    return record


def is_run(record):
    """A record of a whole run without problems (store.problems)."""
    return isinstance(record, dict) and isinstance(record.get("job_run"), dict) and not store.problems(record)


def group_runs(records, application, partition=None, hw_class=None):
    """The runs of ``application`` in one place: of hardware class ``hw_class`` when given, else recorded on
    ``partition``."""
    out = []
    for record in records or ():
        if not is_run(record) or store.record_application(record) != application:
            continue
        if hw_class is not None:
            if store.hardware_class(record.get("hardware")) == hw_class:
                out.append(record)
        elif record["job_run"].get("partition") == partition:
            out.append(record)
    return out


class RunTimeModel(object):
    """The fitted model over groups {key: [(log nodes, log elapsed)]}."""

    def __init__(self, groups):
        self.groups = dict((key, list(points)) for key, points in groups.items() if points)
        self.means = {}
        sxx = sxy = 0.0
        for key, points in self.groups.items():
            mx = sum(x for x, _y in points) / len(points)
            my = sum(y for _x, y in points) / len(points)
            self.means[key] = (mx, my, len(points))
            sxx += sum((x - mx) ** 2 for x, _y in points)
            sxy += sum((x - mx) * (y - my) for x, y in points)
        self.sxx = sxx
        self.scaling_fitted = sxx > 1e-12
        self.slope = sxy / sxx if self.scaling_fitted else 0.0
        n = sum(len(points) for points in self.groups.values())
        self.dof = n - len(self.groups) - (1 if self.scaling_fitted else 0)
        ssr = sum((y - self.level(key) - self.slope * x) ** 2 for key, points in self.groups.items()
                  for x, y in points)
        self.sd = math.sqrt(ssr / self.dof) if self.dof >= 1 else None

    def level(self, key):
        mx, my, _n = self.means[key]
        return my - self.slope * mx

    def predict(self, key, nodes):
        """(seconds, low, high) of a run of group ``key`` on ``nodes`` nodes; low and high are None without an
        interval (no degree of freedom left). None when the group has no runs."""
        if key not in self.means:
            return None
        x = math.log(nodes)
        mean = self.level(key) + self.slope * x
        if self.sd is None:
            return math.exp(mean), None, None
        mx, _my, n = self.means[key]
        spread = 1.0 + 1.0 / n + ((x - mx) ** 2 / self.sxx if self.scaling_fitted else 0.0)
        half = stats.t_quantile(self.dof) * self.sd * math.sqrt(spread)
        return math.exp(mean), math.exp(mean - half), math.exp(mean + half)

    def nodes_measured(self, key):
        """The node counts the group's runs had."""
        return sorted(set(int(round(math.exp(x))) for x, _y in self.groups.get(key, ())))


def fit(groups):
    """The model of groups {key: [run records]}: keys name places (a partition, a hardware class); a key given
    twice by two candidates of the same class is one group."""
    return RunTimeModel(dict((key, [(math.log(r["job_run"]["nodes"]), math.log(r["job_run"]["elapsed_s"]))
                                    for r in runs]) for key, runs in groups.items()))


def describe(model, key, nodes, what):
    """One phrase for the explanation: where the prediction comes from (``what``: the runs' place in words)."""
    n = model.means[key][2]
    measured = model.nodes_measured(key)
    said = "%d recorded run(s) %s on %s node(s)" % (n, what, "/".join(str(m) for m in measured))
    if model.scaling_fitted:
        said += ", node scaling: time x %.2f per doubling" % (2 ** model.slope)
    elif nodes not in measured:
        said += ", no node scaling measured (every group ran at one node count): taken as for %s node(s)" % (
            "/".join(str(m) for m in measured))
    if model.sd is None:
        said += ", no interval (too few runs)"
    return said
