"""Job scripts that HPC centres publish (tests/data/centres): the facts of a request, read from directives.

Imported by tests as ``centres``. ``facts(scheduler, text)`` reads what a script asks for from its directive
lines, in one vocabulary for every scheduler (nodes, tasks, tasks per node, CPUs per task, GPUs and their model,
memory, time, partition, array, placement...); ``compare`` lists the facts where two scripts differ. The
reading is the test's own, written from the schedulers' manuals, not from modak's code.
"""

from __future__ import annotations

import copy
import math
import os
import re

import yaml

from helpers import ROOT

FOLDER = os.path.join(ROOT, "tests", "data", "centres")
with open(os.path.join(FOLDER, "manifest.yaml")) as _stream:
    MANIFEST = yaml.safe_load(_stream)
SCRIPTS = MANIFEST["scripts"]
EXTENSIONS = {"slurm": ".sbatch", "pbspro": ".pbs", "gridengine": ".sge"}
PREFIXES = {"slurm": "#SBATCH", "pbspro": "#PBS", "gridengine": "#$"}
UNITS = {"": 1.0, "k": 1.0 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}
# site resources that mean node-local scratch (UCL's tmpfs) or memory per slot (UCL's mem) on Grid Engine
GE_SCRATCH = ("tmpfs", "tmpfree", "scratch")
GE_MEMORY = ("h_vmem", "mem", "mem_free", "h_rss")


def scheduler_of(entry):
    return entry.get("scheduler", "slurm")


def source_url(entry):
    """Where the centre publishes the script: the file at the commit read."""
    source = MANIFEST["sources"][entry["source"]]
    return "https://github.com/%(repo)s/blob/%(commit)s/%(path)s" % source


def path(entry):
    return os.path.join(FOLDER, entry["name"] + EXTENSIONS[scheduler_of(entry)])


def document(entry, scheduler=None):
    """The DSL document of a manifest entry: its job_options and application, a bare run of ./prog."""
    job = copy.deepcopy(entry["dsl"])
    job.setdefault("application", {}).setdefault("executable", "./prog")
    job.setdefault("target", {})["job_scheduler_type"] = scheduler or scheduler_of(entry)
    return {"job": job}


def megabytes(text, default_unit="m"):
    """'4000' (the unit by default), '1G', '10GB', '1024mb', '15360M' -> MiB."""
    match = re.match(r"^(\d+(?:\.\d+)?)([KkMmGgTt]?)[Bb]?$", str(text).strip())
    if not match:
        raise ValueError("not a size: %r" % text)
    return int(math.ceil(float(match.group(1)) * UNITS[(match.group(2) or default_unit).lower()]))


def seconds(text):
    """'D-HH:MM:SS', 'HH:MM:SS', 'MM:SS' (Slurm, PBS) or 'H:M:S' (Grid Engine) -> seconds."""
    days, _sep, rest = str(text).rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def directive_words(text, prefix):
    """The words of every directive line (trailing comments dropped), in order."""
    words = []
    for line in text.splitlines():
        if not line.startswith(prefix + " "):
            continue
        body = re.split(r"\s+#", line[len(prefix):].strip(), maxsplit=1)[0]
        words.extend(body.split())
    return words


def options(words):
    """[(name, value)] from '--name=value', '--name value', '-x value' and '-x'."""
    out, index = [], 0
    while index < len(words):
        word = words[index]
        if word.startswith("--") and "=" in word:
            name, _sep, value = word[2:].partition("=")
        elif index + 1 < len(words) and not words[index + 1].startswith("-"):
            name, value = word.lstrip("-"), words[index + 1]
            index += 1
        else:
            name, value = word.lstrip("-"), None
        out.append((name, value))
        index += 1
    return out


def _clean(found):
    """Leave out what every scheduler assumes: one CPU per task, no GPU, shared nodes."""
    defaults = {"cpus_per_task": 1, "gpus": 0, "exclusive": False, "mem_whole_node": False}
    return dict((k, v) for k, v in found.items() if v is not None and defaults.get(k, object()) != v)


def slurm_facts(text):
    found = {}
    short = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "t": "time", "p": "partition", "a": "array",
             "C": "constraint", "G": "gpus"}
    for name, value in options(directive_words(text, "#SBATCH")):
        name = short.get(name, name)
        if name == "nodes":
            found["nodes"] = int(value)
        elif name == "ntasks":
            found["tasks"] = int(value)
        elif name == "ntasks-per-node":
            found["tasks_per_node"] = int(value)
        elif name == "cpus-per-task":
            found["cpus_per_task"] = int(value)
        elif name in ("gres", "gpus-per-node"):
            for item in value.split(","):
                parts = item.split(":")
                if name == "gres" and parts[0] == "nvme":
                    found["scratch_mb"] = "gres " + item
                    continue
                if name == "gres":
                    parts = parts[1:]
                found["gpus"] = int(parts[-1])
                if len(parts) > 1:
                    found["gpu_type"] = parts[0]
        elif name == "mem":
            if megabytes(value) == 0:
                found["mem_whole_node"] = True
            else:
                found["mem_per_node_mb"] = megabytes(value)
        elif name == "mem-per-cpu":
            found["mem_per_cpu_mb"] = megabytes(value)
        elif name == "mem-per-gpu":
            found["mem_per_gpu_mb"] = megabytes(value)
        elif name == "tmp":
            found["scratch_mb"] = megabytes(value)
        elif name == "time":
            found["time_s"] = seconds(value)
        elif name == "partition":
            found["partition"] = value
        elif name == "array":
            found["array"] = value
        elif name == "exclusive":
            found["exclusive"] = True
        elif name == "constraint":
            found["features"] = value
    return _clean(found)


def pbspro_facts(text):
    found, chunks = {}, []
    for name, value in options(directive_words(text, "#PBS")):
        if name == "l":
            for resource in value.split(","):
                key, _sep, val = resource.partition("=")
                if key == "select":
                    chunks = [dict(p.split("=", 1) if "=" in p else ("count", p) for p in chunk.split(":"))
                              for chunk in val.split("+")]
                elif key == "walltime":
                    found["time_s"] = seconds(val)
                elif key == "place":
                    words = val.split(":")
                    found["exclusive"] = "excl" in words
                    found["placement"] = next((w for w in words if w in ("pack", "scatter", "free")), None)
                elif key == "gpu_type":
                    found["gpu_type"] = val
        elif name == "q":
            found["partition"] = value
        elif name == "J":
            found["array"] = value
    if chunks:
        found["nodes"] = sum(int(chunk.get("count", 1)) for chunk in chunks)
        first = chunks[0]     # the corpus's scripts ask one chunk kind
        mpiprocs = int(first.get("mpiprocs", 1))
        found["tasks_per_node"] = mpiprocs if mpiprocs != 1 else None
        found["cpus_per_task"] = int(first.get("ncpus", 1)) // max(mpiprocs, 1)
        found["threads"] = int(first["ompthreads"]) if "ompthreads" in first else None
        found["gpus"] = int(first.get("ngpus", 0))
        found["gpu_type"] = first.get("gpu_type", found.get("gpu_type"))
        found["mem_per_node_mb"] = megabytes(first["mem"]) if "mem" in first else None
    return _clean(found)


def gridengine_facts(text):
    found = {}
    for name, value in options(directive_words(text, "#$")):
        if name == "l":
            for resource in value.split(","):
                key, _sep, val = resource.partition("=")
                if key == "h_rt":
                    found["time_s"] = seconds(val)
                elif key in GE_MEMORY:
                    found["mem_per_cpu_mb"] = megabytes(val)
                elif key in GE_SCRATCH:
                    found["scratch_mb"] = megabytes(val)
                elif key in ("gpu", "gpus"):
                    found["gpus"] = int(val)
        elif name == "q":
            found["partition"] = value
        elif name == "t":
            found["array"] = value
    words = directive_words(text, "#$")
    for index, word in enumerate(words):       # '-pe NAME SLOTS' takes two words
        if word == "-pe" and index + 2 < len(words):
            found["parallel_environment"], found["slots"] = words[index + 1], int(words[index + 2])
    return _clean(found)


READERS = {"slurm": slurm_facts, "pbspro": pbspro_facts, "gridengine": gridengine_facts}


def facts(scheduler, text):
    return READERS[scheduler](text)


def compare(centre, modak):
    """{fact: (centre's, modak's)} for every fact where the two differ (a fact only one states differs)."""
    return dict((key, (centre.get(key), modak.get(key))) for key in sorted(set(centre) | set(modak))
                if centre.get(key) != modak.get(key))


def score(centre, modak):
    """(facts compared, facts that match): every fact either script states."""
    keys = set(centre) | set(modak)
    return len(keys), len([k for k in keys if centre.get(k) == modak.get(k)])


def figures(render):
    """[(centre, scripts, facts compared, facts matched)] and the total, for ``render(entry) -> script text``."""
    rows = {}
    for entry in SCRIPTS:
        compared, matched = score(facts(scheduler_of(entry), open(path(entry)).read()),
                                  facts(scheduler_of(entry), render(entry)))
        row = rows.setdefault(entry["centre"], [0, 0, 0])
        row[0] += 1
        row[1] += compared
        row[2] += matched
    table = [(centre,) + tuple(counts) for centre, counts in rows.items()]
    total = ("total", sum(r[1] for r in table), sum(r[2] for r in table), sum(r[3] for r in table))
    return table, total
