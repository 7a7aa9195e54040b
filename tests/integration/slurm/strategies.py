"""Hypothesis strategies: DSL documents whose scheduler request the test cluster can hold.

Every job_options and application field is drawn, within what the cluster offers (conftest.py: six nodes,
128 CPUs and 4 GPUs on the DOWN ones, features avx2 and ib, the partitions below). Dependencies name jobs
that exist: the strategy draws an index, ``fill_dependencies`` puts the real job id in.
"""

from __future__ import annotations

from hypothesis import strategies as st

PARTITIONS = ("debug", "ssd", "standard", "normal", "gpu", "long")
NODE_LISTS = (("node01", 1), ("node[01-02]", 2), ("ssd", 1))   # (list, nodes in it)
WORD = st.from_regex(r"\A[a-z][a-z0-9_]{0,11}\Z")
FILE = st.from_regex(r"\A[a-z][a-z0-9_-]{0,10}(-%j|-%x|_%A_%a|-%u)?\.(out|err|log)\Z")


@st.composite
def walltimes(draw):
    seconds = draw(st.integers(min_value=60, max_value=7 * 86400))
    form = draw(st.sampled_from(("int", "hms", "dhms", "iso")))
    if form == "int":
        return seconds
    days, rest = divmod(seconds, 86400)
    h, m, s = rest // 3600, rest % 3600 // 60, rest % 60
    if form == "hms":
        return "%d:%02d:%02d" % (days * 24 + h, m, s)
    if form == "dhms":
        return "%d-%02d:%02d:%02d" % (days, h, m, s)
    return "P%dDT%dH%dM%dS" % (days, h, m, s)


def memories(max_mb):
    return st.one_of(st.integers(min_value=1, max_value=max_mb),
                     st.integers(min_value=1, max_value=max_mb // 1024).map(lambda g: "%dG" % g),
                     st.integers(min_value=1, max_value=max_mb).map(lambda m: "%dM" % m))


@st.composite
def job_options(draw, with_core_count=False):
    opts = {"job_name": draw(st.from_regex(r"\A[A-Za-z][A-Za-z0-9_.-]{0,20}\Z"))}
    nodes = draw(st.integers(min_value=1, max_value=5))
    tpn = draw(st.integers(min_value=1, max_value=32))
    cpt = draw(st.integers(min_value=1, max_value=4))
    if draw(st.booleans()):
        opts["node_count"] = nodes
    if draw(st.booleans()):
        opts["process_count_per_node"] = tpn
    if draw(st.booleans()):
        opts["core_count_per_process"] = cpt
    if with_core_count:
        opts["core_count"] = draw(st.integers(min_value=1, max_value=nodes * tpn))
        opts["node_count"], opts["process_count_per_node"] = nodes, tpn
    if draw(st.booleans()):
        opts["wall_time_limit"] = draw(walltimes())
    memory = draw(st.sampled_from(("none", "node", "cpu")))       # Slurm takes one of --mem / --mem-per-cpu
    if memory == "node":
        opts["memory_limit"] = draw(memories(262144))
    elif memory == "cpu":
        opts["minimum_memory_per_processor"] = draw(memories(2048))
    place = draw(st.sampled_from(("none", "queue", "partition")))
    if place != "none":
        opts[place] = draw(st.sampled_from(PARTITIONS))
    for key in ("account", "qos"):
        if draw(st.booleans()):
            opts[key] = draw(WORD)
    if draw(st.booleans()):
        opts["job_array"] = draw(st.sampled_from(("0-3", "1,3,5", "0-15:4", "1-8%2", "7")))
    if draw(st.booleans()):
        kinds = draw(st.lists(st.sampled_from(("afterok", "afterany", "afternotok", "after")), min_size=1,
                              max_size=2, unique=True))
        opts["job_dependency"] = ["%s:{%d}" % (kind, draw(st.integers(min_value=0, max_value=1))) for kind in kinds]
    if draw(st.booleans()):
        opts["request_event_notification"] = draw(st.sampled_from(("abe", "a", "be", "BEGIN,END", "FAIL", "ALL",
                                                                   "END")))
        opts["email_address"] = draw(st.sampled_from(("someone@example.org", "a.b@hpc.example.eu")))
    if draw(st.booleans()):
        opts["standard_output_file"] = draw(FILE)
    errors = draw(st.sampled_from(("none", "separate", "combined")))
    if errors == "separate":
        opts["standard_error_file"] = draw(FILE)
        opts["combine_stdout_stderr"] = False
    elif errors == "combined":
        opts["combine_stdout_stderr"] = True
    if draw(st.booleans()):
        opts["request_gpus"] = draw(st.integers(min_value=1, max_value=4))
    if draw(st.booleans()):
        opts["architecture_constraint"] = draw(st.sampled_from(("avx2", "ib", "avx2&ib")))
    if draw(st.booleans()):
        opts["node_exclusive"] = draw(st.booleans())
    if draw(st.booleans()):
        opts["copy_environment"] = draw(st.booleans())
    if draw(st.booleans()):
        opts["copy_environment_variable"] = draw(st.sampled_from(("A", "A,B=1", "OMP_PLACES=cores")))
    if draw(st.booleans()):
        opts["defer_job"] = draw(st.sampled_from(("2030-01-02", "2030-01-02T03:04", "2031-12-31T23:59:59")))
    if draw(st.booleans()) and not with_core_count:
        nodelist, count = draw(st.sampled_from(NODE_LISTS))
        opts["request_specific_nodes"] = nodelist
        opts["node_count"] = max(opts.get("node_count", 1), count)
    return opts


@st.composite
def applications(draw, opts):
    app = {"executable": draw(st.sampled_from(("./a.out", "python3 train.py", "/bin/echo")))}
    if draw(st.booleans()):
        app["arguments"] = draw(st.one_of(st.lists(WORD, max_size=4), WORD.map(lambda w: "--flag " + w)))
    if draw(st.booleans()):
        app["app_type"] = draw(st.sampled_from(("mpi", "hpc", "python")))
    nodes = opts.get("node_count", 1)
    tpn = opts.get("process_count_per_node", 32)
    cpt = opts.get("core_count_per_process")
    threads = draw(st.integers(min_value=1, max_value=4))
    if not cpt and draw(st.booleans()):
        app["threads"] = threads
    if "core_count" not in opts and draw(st.booleans()):
        # ranks that fit: modak raises tasks per node when ranks do not fit, up to the node's 128 CPUs
        per_node_cpus = 128 // max(cpt or app.get("threads", 1), 1)
        app["mpi_ranks"] = draw(st.integers(min_value=1, max_value=min(nodes * per_node_cpus, nodes * max(tpn, 1) * 2)))
    for key, strategy in (("environment", st.dictionaries(st.from_regex(r"\A[A-Z][A-Z0-9_]{0,8}\Z"), WORD,
                                                          max_size=2)),
                          ("bind_paths", st.lists(st.sampled_from(("/scratch", "/data:/data:ro")), max_size=2,
                                                  unique=True)),
                          ("modules", st.lists(st.sampled_from(("gcc/12", "openmpi")), max_size=2, unique=True)),
                          ("launcher", st.sampled_from(("auto", "srun", "mpirun", "none"))),
                          ("working_directory", st.sampled_from(("/scratch/run", "/tmp"))),
                          ("container_runtime", st.sampled_from(("docker://alpine:3.19", "/images/app.sif"))),
                          ("app_tag", WORD)):
        if draw(st.booleans()):
            app[key] = draw(strategy)
    return app


@st.composite
def documents(draw, with_core_count=False):
    opts = draw(job_options(with_core_count=with_core_count))
    return {"job": {"job_options": opts, "application": draw(applications(opts)),
                    "target": {"job_scheduler_type": "slurm"}}}


def fill_dependencies(doc, job_ids):
    """Replace the '{0}' / '{1}' placeholders of job_dependency with real (held) job ids."""
    opts = doc["job"]["job_options"]
    if "job_dependency" in opts:
        opts["job_dependency"] = [dep.format(*job_ids) for dep in opts["job_dependency"]]
    return doc
