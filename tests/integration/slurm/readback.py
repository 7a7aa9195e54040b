"""The scheduler as the oracle: submit a script held, read back what Slurm understood, compare it with the DSL.

``submit_held`` runs ``sbatch --hold --parsable`` (or Slurm's ``qsub -h`` wrapper for Torque-syntax scripts; sbatch
then reads the ``#PBS`` lines itself), ``show_job`` parses ``scontrol show job -o``, ``expect`` derives from a DSL
document (independently of modak's code) what the scheduler must hold, and ``mismatches`` lists every field where
the two differ. Held jobs never start, so they may ask for nodes that do not run (the test cluster's DOWN nodes).
"""

from __future__ import annotations

import math
import re
import subprocess

KEY = re.compile(r"(?:^| )([A-Za-z][A-Za-z0-9/:_]*)=")
UNITS = {"K": 1.0 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
PBS_MAIL = {"a": "FAIL", "b": "BEGIN", "e": "END"}


class SubmitError(Exception):
    """sbatch or qsub refused a script."""


def run(argv, cwd=None, timeout=30):
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def submit_held(script, cwd, torque=False, extra=()):
    """Submit ``script`` held from ``cwd``; return the job id (the array's id for arrays)."""
    argv = (["qsub", "-h"] if torque else ["sbatch", "--hold", "--parsable"]) + list(extra) + [script]
    proc = run(argv, cwd=cwd)
    if proc.returncode != 0:
        raise SubmitError("%s: rc %d: %s%s" % (" ".join(argv), proc.returncode, proc.stdout, proc.stderr))
    return proc.stdout.strip().splitlines()[-1].split(";")[0].split(".")[0]


def parse_record(line):
    """One ``scontrol show job -o`` line -> {key: value}."""
    keys = list(KEY.finditer(line))
    record = {}
    for index, match in enumerate(keys):
        end = keys[index + 1].start() if index + 1 < len(keys) else len(line)
        record[match.group(1)] = line[match.end():end].strip()
    return record


def show_job(job_id):
    """The first record (the array's pending record for arrays) of ``scontrol show job -o ID``."""
    proc = run(["scontrol", "show", "job", "-o", str(job_id)])
    if proc.returncode != 0:
        raise SubmitError("scontrol show job %s: %s" % (job_id, proc.stderr))
    return parse_record(proc.stdout.strip().splitlines()[0])


def cancel(job_ids):
    ids = [str(j) for j in job_ids if j]
    if ids:
        run(["scancel"] + ids)


def seconds(text):
    """Slurm's time 'D-HH:MM:SS', 'HH:MM:SS' or 'MM:SS' -> seconds."""
    days, _sep, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def megabytes(text):
    """Slurm's memory '2000M', '2G', '512K' -> MiB (float)."""
    match = re.match(r"^(\d+(?:\.\d+)?)([KMGT]?)$", text)
    return float(match.group(1)) * UNITS[match.group(2) or "M"]


def dsl_megabytes(value):
    """The DSL's memory (an integer of MiB, '4G', '512 MB', '1.5G') -> MiB, rounded up as schedulers do."""
    if isinstance(value, int):
        return value
    match = re.match(r"^(\d+(?:\.\d+)?)\s?([KkMmGgTt]?)", str(value).strip())
    return int(math.ceil(float(match.group(1)) * UNITS[(match.group(2) or "M").upper()]))


def dsl_seconds(value):
    """The DSL's wall time (seconds, [D-]H:MM:SS, ISO 8601 P1DT2H) -> seconds."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    iso = re.match(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$", text)
    if iso:
        d, h, m, s = (int(g or 0) for g in iso.groups())
        return d * 86400 + h * 3600 + m * 60 + s
    return seconds(text)


def mail_types(text):
    """The DSL's events (Slurm words or PBS letters) -> the set Slurm reports."""
    if re.match(r"^[abenABEN]+$", text) and text.upper() not in ("END", "BEGIN"):
        return {PBS_MAIL[c] for c in text.lower() if c in PBS_MAIL}
    words = {w.strip().upper() for w in text.split(",")}
    if "ALL" in words:
        return {"ALL"}
    return words - {"NONE"}


def reported_mail(text):
    if text in ("", "NONE", "(null)"):
        return set()
    words = set(text.split(","))
    if words >= {"BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"}:
        return {"ALL"}
    return words


def expect(doc, default_partition="debug"):
    """What Slurm must report for a DSL document: {field: value}, with None for 'anything'.

    Written from the DSL's documentation, not from modak's code: nodes, tasks and threads follow the
    job model (node_count, process_count_per_node, core_count, core_count_per_process, mpi_ranks, threads).
    """
    job = doc["job"]
    opts = job.get("job_options") or {}
    app = job.get("application") or {}
    target = job.get("target") or {}
    ranks = app.get("mpi_ranks", 1)
    tpn = opts.get("process_count_per_node")
    # node_count: the nodes asked for; without it the scheduler spreads the tasks (no one-node pinning) and the
    # node count is Slurm's to choose. Counted nodes (the fewest that hold the tasks) are what Torque asks.
    fixed = opts.get("node_count")
    counted = fixed or int(math.ceil(max(ranks, opts.get("core_count") or 1) / float(tpn))) if tpn else (fixed or 1)
    if ranks > 1 and not opts.get("core_count") and fixed and (tpn is None or fixed * tpn < ranks):
        tpn = int(math.ceil(ranks / float(fixed)))
    # core_count: the job's total tasks, as Slurm's --ntasks; at least the ranks the launcher starts (a step
    # cannot start more tasks than the job has), and no more nodes than tasks (Slurm lowers the node count);
    # without a node count, the ranks are the job's tasks
    tasks = max(opts["core_count"], ranks) if opts.get("core_count") else (ranks if ranks > 1 and not fixed else None)
    nodes = fixed
    if tasks and nodes and tasks < nodes:
        nodes = tasks
    if ranks > 1 and not fixed and not opts.get("core_count") and tpn is None:
        counted = 1                 # Torque counts per node: the ranks on the fewest nodes
    out = {
        "JobName": opts.get("job_name", "job"),
        "NumNodes": nodes,
        "CountedNodes": min(counted, tasks) if tasks else counted,
        "NtasksPerN:B:S:C": tpn,
        "NumTasks": tasks,
        "MinTasks": ranks if ranks > 1 else None,
        "CPUs/Task": opts.get("core_count_per_process") or app.get("threads", 1),
        "Partition": opts.get("queue") or opts.get("partition") or target.get("partition") or default_partition,
        "Account": opts.get("account"),
        "QOS": opts.get("qos"),
        "Array": opts.get("job_array"),
        "Dependency": opts.get("job_dependency"),
        "MailType": mail_types(opts["request_event_notification"]) if opts.get("request_event_notification")
        and opts.get("email_address") else None,
        "MailUser": opts.get("email_address") if opts.get("request_event_notification") else None,
        "StdOut": opts.get("standard_output_file"),
        "StdErr": opts.get("standard_error_file"),
        "Combine": bool(opts.get("combine_stdout_stderr", True)),
        "ReqNodeList": opts.get("request_specific_nodes"),
        "Features": opts.get("architecture_constraint"),
        "Exclusive": bool(opts.get("node_exclusive")),
    }
    if "wall_time_limit" in opts:
        out["TimeLimit"] = int(math.ceil(dsl_seconds(opts["wall_time_limit"]) / 60.0)) * 60
    if "memory_limit" in opts:
        out["MinMemoryNode"] = dsl_megabytes(opts["memory_limit"])
    if "minimum_memory_per_processor" in opts:
        out["MinMemoryCPU"] = dsl_megabytes(opts["minimum_memory_per_processor"])
    gpus = opts.get("request_gpus")
    if gpus is None:
        acc = ((job.get("optimisation") or {}).get("opt_build") or {}).get("acc_type")
        out["GPUs"] = {0, 1} if acc in ("nvidia", "amd") else {0}     # the default for an accelerator: issue 10 #7
    else:
        out["GPUs"] = {gpus}
    out.update(distributed_expectation(job))
    return out


def distributed_expectation(job):
    """Data-parallel training (docs/scheduler.md, "Distributed training"): node_count x processes_per_node ranks
    (default one per GPU); srun starts one task per rank, torchrun one task per node with every rank's CPUs."""
    opt = job.get("optimisation") or {}
    config = (opt.get("app_type-ai_training") or {}).get("config") or {}
    if opt.get("app_type") != "ai_training" or config.get("distributed_training") not in (True, "true", "True"):
        return {}
    opts, app = job.get("job_options") or {}, job.get("application") or {}
    acc = (opt.get("opt_build") or {}).get("acc_type")
    gpus = opts.get("request_gpus", 1 if acc in ("nvidia", "amd") else 0)
    ppn = config.get("processes_per_node") or gpus or 1
    nodes = opts.get("node_count") or 1
    threads = opts.get("core_count_per_process") or app.get("threads", 1)
    if config.get("distributed_launch") == "torchrun":
        return {"NumNodes": nodes, "NtasksPerN:B:S:C": 1, "NumTasks": nodes, "MinTasks": None,
                "CPUs/Task": ppn * threads}
    return {"NumNodes": nodes, "NtasksPerN:B:S:C": ppn, "NumTasks": nodes * ppn, "MinTasks": None,
            "CPUs/Task": threads}


def _gpus(record):
    for key in ("TresPerNode", "TresPerJob", "Gres"):
        match = re.search(r"gpu(?::[A-Za-z0-9_.-]+)?:(\d+)", record.get(key, ""))
        if match:
            return int(match.group(1))
    return 0


def _path(record, key, workdir):
    """A stdout/stderr path as written in the script, relative to the job's working directory."""
    value = record.get(key, "")
    if value.startswith(workdir.rstrip("/") + "/"):
        value = value[len(workdir.rstrip("/")) + 1:]
    return value


def expand(pattern, record, task=None):
    """Slurm's filename patterns (%j %A %a %x %u %%) for a pending record, as scontrol shows them."""
    job_id = record.get("ArrayJobId") or record.get("JobId")
    task = task or record.get("ArrayTaskId", "")
    task = task if re.match(r"^\d+$", task) else "4294967294"
    subs = {"j": record.get("JobId", ""), "A": job_id, "a": task, "x": record.get("JobName", ""),
            "u": record.get("UserId", "").split("(")[0], "%": "%"}
    return re.sub(r"%([jAaxu%])", lambda m: subs[m.group(1)], pattern)


def mismatches(expected, record, workdir):
    """Every field where Slurm's record differs from the expectation: [(field, expected, reported)]."""
    out = []

    def check(field, want, got):
        if want is not None and want != got:
            out.append((field, want, got))

    check("JobName", expected["JobName"], record.get("JobName"))
    check("NumNodes", expected["NumNodes"], int(record["NumNodes"].split("-")[0]))
    if expected.get("TasksFromPpn"):      # Torque nodes=N:ppn=P: sbatch's #PBS parser asks N x P tasks
        check("NumTasks (nodes x ppn)", expected["NumNodes"] * expected["TasksFromPpn"], int(record["NumTasks"]))
    elif expected["NtasksPerN:B:S:C"]:
        check("NtasksPerNode", expected["NtasksPerN:B:S:C"], int(record["NtasksPerN:B:S:C"].split(":")[0]))
    check("NumTasks", expected["NumTasks"], int(record["NumTasks"]) if record.get("NumTasks", "").isdigit() else None)
    if expected["MinTasks"]:
        tasks = int(record["NumTasks"]) if record.get("NumTasks", "").isdigit() else 0
        if tasks < expected["MinTasks"]:
            out.append(("NumTasks>=mpi_ranks", expected["MinTasks"], tasks))
    check("CPUs/Task", expected["CPUs/Task"], int(record["CPUs/Task"]))
    check("Partition", expected["Partition"], record.get("Partition"))
    check("Account", expected["Account"], record.get("Account"))
    if record.get("QOS") != "(null)":       # without accounting storage Slurm keeps no QOS: (null)
        check("QOS", expected["QOS"], record.get("QOS"))
    if expected["Array"] is not None:
        # '0-3%2': scontrol shows the throttle with the indexes; compare index sets ('0-12:4' is '0,4,8,12')
        check("ArrayTaskId", array_indexes(expected["Array"]), array_indexes(record.get("ArrayTaskId", "")))
    if expected["Dependency"] is not None:
        deps = expected["Dependency"]
        want = deps if isinstance(deps, str) else ",".join(deps)
        # a job that is an array shows as 'afterok:12_*'
        got = re.sub(r"(_\*)?\((unfulfilled|failed)\)", "", record.get("Dependency", ""))
        check("Dependency", _norm_dependency(want), _norm_dependency(got))
    if expected["MailType"] is not None:
        check("MailType", expected["MailType"], reported_mail(record.get("MailType", "")))
        check("MailUser", expected["MailUser"], record.get("MailUser"))
    if "TimeLimit" in expected:
        check("TimeLimit", expected["TimeLimit"], seconds(record["TimeLimit"]))
    if "MinMemoryNode" in expected:
        check("MinMemoryNode", expected["MinMemoryNode"], megabytes(record.get("MinMemoryNode", "0")))
    if "MinMemoryCPU" in expected:
        check("MinMemoryCPU", expected["MinMemoryCPU"], megabytes(record.get("MinMemoryCPU", "0")))
    gpus = _gpus(record)
    if gpus not in expected["GPUs"]:
        out.append(("GPUs", sorted(expected["GPUs"]), gpus))
    stdout = _path(record, "StdOut", workdir)
    stderr = _path(record, "StdErr", workdir)
    # a pending array of one index shows that index as ArrayTaskId, but %a still as NO_VAL in its file names
    no_val = "4294967294"
    if expected["StdOut"] is not None and stdout != expand(expected["StdOut"], record, no_val):
        check("StdOut", expand(expected["StdOut"], record), stdout)
    if expected["Combine"]:
        check("StdErr=StdOut (combine_stdout_stderr)", stdout, stderr)
    elif expected["StdErr"] is not None and stderr != expand(expected["StdErr"], record, no_val):
        check("StdErr", expand(expected["StdErr"], record), stderr)
    check("ReqNodeList", expected["ReqNodeList"], record.get("ReqNodeList"))
    check("Features", expected["Features"], record.get("Features"))
    if expected["Exclusive"]:
        check("OverSubscribe", "NO", record.get("OverSubscribe"))
    return out


def _norm_dependency(text):
    return sorted(re.sub(r"\+0$", "", part) for part in re.split(r"[,?]", text) if part)


def array_indexes(text):
    """'0-15:4,7%2' -> (frozenset of indexes, throttle or None)."""
    spec, _sep, throttle = text.partition("%")
    indexes = set()
    for part in spec.split(","):
        match = re.match(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$", part)
        if not match:
            return (text, None)
        first = int(match.group(1))
        last = int(match.group(2) or first)
        indexes.update(range(first, last + 1, int(match.group(3) or 1)))
    return (frozenset(indexes), throttle or None)


def torque_translated(expected):
    """What Slurm must hold for the Torque script of the same DSL, read through qsub/sbatch's #PBS parser.

    Torque counts processors per node (nodes=N:ppn=P with P = tasks x threads per node); sbatch's #PBS parser
    turns that into N x P tasks of one CPU. Fields the #PBS parser does not translate are left unchecked (None).
    """
    out = dict(expected)
    out["NumNodes"] = expected["CountedNodes"]
    tpn = expected["NtasksPerN:B:S:C"] or 1
    if expected["NumTasks"]:       # core_count spread over the nodes (nodes=N:ppn=P, P = tasks per node x threads)
        tpn = int(math.ceil(expected["NumTasks"] / float(out["NumNodes"])))
    out["TasksFromPpn"] = tpn * expected["CPUs/Task"]
    out["NtasksPerN:B:S:C"] = None
    out["CPUs/Task"] = 1
    out["MinTasks"] = None
    for field in TORQUE_UNCHECKED:
        out[field] = None
    out["Combine"] = False
    out.pop("MinMemoryCPU", None)
    return out


# fields a #PBS script cannot carry to Slurm: sbatch's #PBS parser drops them, or the qsub wrapper overrides them
# on sbatch's command line (-o NAME.o%A -e NAME.e%A), or they are left out before submission (PBS_UNREADABLE)
TORQUE_UNCHECKED = ("QOS", "ReqNodeList", "Features", "NumTasks", "StdOut", "StdErr", "Exclusive")
# Torque directives that sbatch's #PBS parser refuses ("sbatch: invalid option -- 'n'"): node_exclusive
PBS_UNREADABLE = ("#PBS -n",)
