# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 1 of the pipeline: load the DSL (JSON or YAML), validate it, build a JobRequest.

Every problem is collected and reported at once, each with its path, the bad value and a hint.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import traceback

from ansible_collections.sodalite.modak.plugins.module_utils import (
    compat, cpu, distributed, dsl_rules, frameworks, schema, shell, strict_load)
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, nearest, path_str
from ansible_collections.sodalite.modak.plugins.module_utils.model import (
    Application, Build, Distributed, JobOptions, JobRequest, Optimisation, Target)
from ansible_collections.sodalite.modak.plugins.module_utils.versions import VersionRequest

try:
    import yaml  # pylint: disable=unused-import  # read as dsl.yaml by cli.py and module_support.py
    YAML_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - reported by the module
    yaml = None
    YAML_IMPORT_ERROR = traceback.format_exc()

try:
    import jsonschema
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - reported by the module
    jsonschema = None
    JSONSCHEMA_IMPORT_ERROR = traceback.format_exc()

MAX_BYTES = strict_load.DSL.max_bytes  # a DSL document is small; anything larger is refused unread
MAX_DEPTH = strict_load.DSL.max_depth
MAX_NODES = strict_load.DSL.max_nodes
MAX_SPLIT = 16384

SLURM_EVENTS = ("NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
                "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS")
PBS_LETTERS = {"a": "FAIL", "b": "BEGIN", "e": "END", "n": "NONE"}
SCHEDULER_ALIASES = schema.scheduler_registry.ALIASES
# memory requests that exclude each other: per node, per CPU, per GPU, the whole node
MEMORY_FIELDS = ("memory_limit", "minimum_memory_per_processor", "memory_per_gpu", "memory_whole_node")
_MEM_UNITS = {"": 1.0, "k": 1.0 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}


# ---------------------------------------------------------------- loading

def loads(text, fmt="auto"):
    """Parse DSL text (JSON or YAML, safe loading only) into plain data, within the DSL's limits."""
    return strict_load.loads(text, fmt, strict_load.DSL)


def load_file(path):
    """Read and parse a DSL file (a regular file only); the format follows the extension, else the content."""
    data = strict_load.read_file(path, strict_load.DSL)
    fmt = "json" if str(path).endswith(".json") else ("yaml" if str(path).endswith((".yml", ".yaml")) else "auto")
    return loads(data, fmt)


# ---------------------------------------------------------------- schema errors

_PATTERNS = {}


def end_anchored(pattern):
    """The schema's pattern with JSON Schema (ECMA 262) meaning: '$' is the end of the text.

    Python's '$' also matches before a final newline, which let 'job\\n' through every '^...$' pattern.
    """
    if pattern not in _PATTERNS:
        out, escaped, in_class = [], False, False
        for char in pattern:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == "[" and not in_class:
                in_class = True
            elif char == "]" and in_class:
                in_class = False
            elif char == "$" and not in_class:
                char = "\\Z"
            out.append(char)
        # ASCII: '\\d' is 0-9 only, as in JSON Schema; other scripts' digits never reach a directive
        _PATTERNS[pattern] = re.compile("".join(out), re.ASCII)
    return _PATTERNS[pattern]


def _pattern_keyword(validator, pattern, instance, _schema):
    if validator.is_type(instance, "string") and len(instance) > _schema.get("maxLength", schema.PATTERN_MAX_LENGTH):
        if "maxLength" not in _schema:  # otherwise maxLength reports it; the pattern never sees a long text
            yield jsonschema.ValidationError("is too long", validator="maxLength",
                                             validator_value=schema.PATTERN_MAX_LENGTH)
    elif validator.is_type(instance, "string") and not end_anchored(pattern).search(instance):
        yield jsonschema.ValidationError("%r does not match %r" % (instance, pattern))


_VALIDATOR = []


def _is_integer(_checker, instance):
    """Only whole numbers written as integers: 2.0 is not a task count (JSON Schema would accept it)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(_checker, instance):
    """Finite numbers only: NaN and infinities (YAML .nan/.inf, JSON NaN) are refused."""
    return (isinstance(instance, (int, float)) and not isinstance(instance, bool)
            and (isinstance(instance, int) or math.isfinite(instance)))


def _validator():
    if not _VALIDATOR:
        base = jsonschema.Draft202012Validator
        checker = base.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
        cls = jsonschema.validators.extend(base, {"pattern": _pattern_keyword}, type_checker=checker)
        _VALIDATOR.append(cls(schema.SCHEMA))
    return _VALIDATOR[0]


def _sub_schema(error):
    return error.schema if isinstance(error.schema, dict) else {}


def _problems_from_schema(doc):
    validator = _validator()
    problems = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        where = list(error.absolute_path)
        path = path_str(where)
        sub = _sub_schema(error)
        kind = error.validator
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            known = list(sub.get("properties", {}))
            for key in sorted(set(error.instance) - set(known), key=str):
                guess = nearest(key, known)
                hint = "did you mean '%s'?" % guess if guess else "valid keys: %s" % ", ".join(known)
                problems.append(DslProblem(path_str(where + [key]), "unknown key '%s'" % key, hint=hint))
        elif kind == "enum":
            choices = [c for c in sub.get("enum", []) if c != ""]
            guess = nearest(error.instance, choices)
            hint = ("did you mean '%s'? " % guess if guess else "") + "one of: %s" % ", ".join(map(str, choices))
            problems.append(DslProblem(path, "not an accepted value", error.instance, hint))
        elif kind == "required":
            missing = error.message.split("'")[1] if "'" in error.message else error.message
            problems.append(DslProblem(path_str(where + [missing]), "is required", hint=sub.get("properties", {})
                                       .get(missing, {}).get("description")))
        elif kind == "pattern":
            problems.append(DslProblem(path, "has characters or a form that is not accepted", error.instance,
                                       sub.get("description") or "one line, no spaces or shell characters"))
        elif kind == "type":
            want = sub.get("type")
            want = " or ".join(want) if isinstance(want, list) else want
            problems.append(DslProblem(path, "must be of type %s" % want, error.instance))
        elif kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            problems.append(DslProblem(path, "is out of range (%s %s)" % (kind, error.validator_value),
                                       error.instance, sub.get("description")))
        elif kind in ("maxLength", "maxItems", "maxProperties"):
            problems.append(DslProblem(path, "is too long (%s %s)" % (kind, error.validator_value)))
        elif kind == "propertyNames":
            problems.append(DslProblem(path, "has a variable name that is not accepted", error.instance,
                                       "names are letters, digits and '_', not starting with a digit"))
        else:
            problems.append(DslProblem(path, error.message))
    return problems


# ---------------------------------------------------------------- value parsers

def walltime_seconds(value):
    """Seconds, 'S', 'M:S', 'H:M:S', 'D-H:M:S' or ISO 8601 'P1DT2H' -> seconds."""
    if isinstance(value, bool):
        raise ValueError("not a duration")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    iso = re.match(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?\Z", text)
    if iso:
        d, h, m, s = (int(g or 0) for g in iso.groups())
        return ((d * 24 + h) * 60 + m) * 60 + s
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        days = int(day_text)
    parts = [int(p) for p in text.split(":")]
    for part in parts[1:]:
        if part >= 60:
            raise ValueError("minutes and seconds must be below 60")
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, minutes, seconds = parts
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def memory_mb(value):
    """4096 (MiB), '4G', '512M', '1.5T' -> MiB (rounded up)."""
    if isinstance(value, bool):
        raise ValueError("not a size")
    if isinstance(value, int):
        return value
    match = re.match(r"^(\d+(?:\.\d+)?)\s?([KkMmGgTt]?)", str(value).strip())
    if not match:
        raise ValueError("not a size")
    return max(1, int(math.ceil(float(match.group(1)) * _MEM_UNITS[match.group(2).lower()])))


def mail_events(text):
    """Slurm words or PBS letters -> canonical Slurm words; raises ValueError with a hint."""
    words = [w.strip().upper() for w in str(text).split(",") if w.strip()]
    if all(w in SLURM_EVENTS for w in words):
        return tuple(words)
    if "," not in text and re.match(r"^[abenABEN]+\Z", text):
        return tuple(PBS_LETTERS[c] for c in text.lower())
    bad = [w for w in words if w not in SLURM_EVENTS]
    guess = nearest(bad[0], SLURM_EVENTS) if bad else None
    raise ValueError("unknown event %s%s" % (bad[0] if bad else text, "; did you mean %s?" % guess if guess else ""))


# ---------------------------------------------------------------- semantic rules

def _get(doc, *keys):
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def expanded_word(value):
    """One shell word for an environment_expanded value: $NAME/${NAME} expanded when the job runs, the rest quoted."""
    words = shell.split_command(value)
    word = words[0] if words else ""
    return word if isinstance(word, shell.Expanding) else shell.Raw(shell.quote(word) if word else "''")


def _semantic_problems(doc):
    out = []
    job = doc.get("job", {})
    opts = job.get("job_options") or {}
    app = job.get("application") or {}
    opt = job.get("optimisation")
    base = "job.job_options"

    if "wall_time_limit" in opts:
        try:
            if walltime_seconds(opts["wall_time_limit"]) <= 0:
                out.append(DslProblem(base + ".wall_time_limit", "must be longer than zero", opts["wall_time_limit"]))
        except ValueError as exc:
            out.append(DslProblem(base + ".wall_time_limit", str(exc), opts["wall_time_limit"],
                                  "use seconds, 'H:MM:SS', 'D-HH:MM:SS' or 'P1DT2H'"))
    events = opts.get("request_event_notification")
    if events is not None:
        try:
            words = mail_events(events)
        except ValueError as exc:
            out.append(DslProblem(base + ".request_event_notification", str(exc), events,
                                  "Slurm words (BEGIN,END,FAIL,ALL,NONE) or PBS letters (abe, n)"))
        else:
            if words != ("NONE",) and not opts.get("email_address"):
                out.append(DslProblem(base + ".email_address", "is required when event notifications are requested",
                                      hint="add an email address or drop request_event_notification"))
    if opts.get("combine_stdout_stderr") in (False, "false", "False") and not opts.get("standard_error_file"):
        out.append(DslProblem(base + ".standard_error_file", "is required when combine_stdout_stderr is false",
                              hint="name an error file, or set combine_stdout_stderr to true"))
    if opts.get("queue") and opts.get("partition") and opts["queue"] != opts["partition"]:
        out.append(DslProblem(base + ".partition", "differs from queue; both name the same thing",
                              opts["partition"], "give only one of queue and partition"))
    target = job.get("target") or {}
    kinds = set(SCHEDULER_ALIASES.get(target[k], target[k]) for k in ("job_scheduler_type", "queue_type")
                if isinstance(target.get(k), str))
    if len(kinds) > 1:
        out.append(DslProblem("job.target.queue_type", "differs from job_scheduler_type; both name the scheduler",
                              target["queue_type"], "give only job_scheduler_type"))
    memory = [key for key in MEMORY_FIELDS if opts.get(key) not in (None, False, "false", "False")]
    for key in memory[1:]:
        out.append(DslProblem(base + "." + key, "cannot be combined with %s (schedulers take one memory request: "
                              "Slurm's --mem, --mem-per-cpu and --mem-per-gpu exclude each other)" % memory[0],
                              hint="keep one of %s" % ", ".join(memory)))
    if opts.get("memory_per_gpu") is not None and opts.get("request_gpus") == 0:
        out.append(DslProblem(base + ".memory_per_gpu", "asks memory per GPU of a job without GPUs (request_gpus 0)",
                              hint="ask for GPUs, or use memory_limit"))

    words = {}
    for key in ("executable", "arguments"):
        value = app.get(key)
        # shlex is quadratic in the token length: only split what the schema lets through (16 KiB at most)
        if isinstance(value, str) and len(value) <= MAX_SPLIT:
            try:
                words[key] = shell.split_words(value)
            except ValueError as exc:
                out.append(DslProblem("job.application." + key, "cannot be split into words: %s" % exc, value,
                                      "balance the quotes, or give arguments as a list"))
        elif isinstance(value, list):
            words[key] = [str(v) for v in value]
    first = (words.get("executable") or []) + (words.get("arguments") or [])
    if first and not first[0].strip():
        where = "job.application.executable" if words.get("executable") else "job.application.arguments"
        out.append(DslProblem(where, "the program to run is an empty word", first[0],
                              "name the program first, e.g. ./app or python3"))

    out.extend(dsl_rules.program_problems(words))
    out.extend(dsl_rules.environment_problems(app.get("environment")))
    out.extend(dsl_rules.environment_problems(app.get("environment_expanded"), "job.application.environment_expanded"))
    out.extend(dsl_rules.expanded_problems(app))
    out.extend(dsl_rules.directive_problems(opts.get("extra_directives"), dsl_rules.scheduler_of(doc)))
    out.extend(dsl_rules.defer_problems(opts.get("defer_job")))
    out.extend(dsl_rules.engine_problems(doc))
    out.extend(dsl_rules.launch_problems(app, dsl_rules.scheduler_of(doc)))
    if isinstance(opt, dict):
        out.extend(_optimisation_problems(opt))
        out.extend(distributed.problems(doc))
    return out


def _optimisation_problems(opt):
    out = []
    base = "job.optimisation"
    app_type = opt.get("app_type")
    sections = [k for k in opt if k.startswith("app_type-")]
    if app_type and "app_type-%s" % app_type not in opt:
        out.append(DslProblem(base + ".app_type-%s" % app_type, "is required because app_type is '%s'" % app_type,
                              hint="add the section that describes the %s application" % app_type))
    for key in sections:
        if app_type and key != "app_type-%s" % app_type:
            out.append(DslProblem(base + "." + key, "does not match app_type '%s'" % app_type,
                                  hint="remove it, or set app_type to '%s'" % key.split("-", 1)[1]))
    section = opt.get("app_type-%s" % app_type) if app_type else None
    if isinstance(section, dict):
        where = "%s.app_type-%s" % (base, app_type)
        if app_type in ("ai_training", "ai_inference"):
            chosen = _get(section, "config", "ai_framework")
            prefix = "ai_framework-"
        else:
            chosen = _get(section, "config", "parallelisation")
            prefix = "parallelisation-"
        for key in section:
            if key.startswith(prefix) and chosen and key != prefix + chosen:
                out.append(DslProblem(where + "." + key, "does not match the chosen %s '%s'" % (prefix[:-1], chosen),
                                      hint="remove it, or choose '%s'" % key[len(prefix):]))
        details = section.get(prefix + chosen) if chosen else None
        if isinstance(details, dict) and "version" in details:
            try:
                VersionRequest(details["version"])
            except ValueError as exc:
                out.append(DslProblem(where + ".%s%s.version" % (prefix, chosen), str(exc), details["version"]))
    build = opt.get("opt_build") or {}
    cpu_type = build.get("cpu_type")
    if cpu_type:
        arch = cpu.CPU_TYPE_ARCH.get(cpu_type)
        for key in ("cpu_isa", "cpu_microarch"):
            value = build.get(key)
            if not value or not isinstance(value, str):
                continue
            value_arch = cpu.arch_of(value)
            if value_arch and value_arch != arch:
                out.append(DslProblem(base + ".opt_build." + key, "is a %s value but cpu_type '%s' is %s"
                                      % (value_arch, cpu_type, arch), value))
    return out


def problems(doc):
    """All problems of a parsed document (schema first, then the semantic rules)."""
    if jsonschema is None:
        raise DslInvalid([DslProblem("", "the jsonschema library is needed to validate the DSL")])
    if not isinstance(doc, dict):
        return [DslProblem("", "the document must be a mapping with a 'job' key", type(doc).__name__,
                           'start with {"job": {"application": {...}}}')]
    found = dsl_rules.number_problems(doc) + _problems_from_schema(doc)
    if not found:
        found.extend(_semantic_problems(doc))
    else:
        # semantic rules are still checked where the schema found nothing wrong in the same place
        seen = set(p.path for p in found)
        found.extend(p for p in _safe_semantic(doc) if p.path not in seen)
    return sorted(found, key=lambda p: p.path)


def _safe_semantic(doc):
    try:
        return _semantic_problems(doc)
    except (TypeError, AttributeError, KeyError, ValueError):
        return []


# ---------------------------------------------------------------- building the request

def _words(value):
    """A list is exact words; a string is split like a shell would, $NAME/${NAME} left to expand at run time."""
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return tuple(shell.split_command(value))


def _lines(value):
    """Shell text (pre-/post-execution, target setup): one text or a list of lines -> tuple of texts."""
    if value is None or value == "":
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _job_options(raw, notes):
    events = mail_events(raw["request_event_notification"]) if raw.get("request_event_notification") else ()
    dependency = raw.get("job_dependency") or ()
    if isinstance(dependency, str):
        dependency = (dependency,)
    stderr = raw.get("standard_error_file")
    if stderr and raw.get("combine_stdout_stderr") is True:
        notes.append("combine_stdout_stderr is true: standard error goes to the output file; standard_error_file "
                     "%s is not used" % stderr)
        stderr = None
    return JobOptions(
        job_name=raw.get("job_name", "job"),
        queue=raw.get("queue") or raw.get("partition"),
        constraint=raw.get("architecture_constraint"),
        walltime_s=walltime_seconds(raw["wall_time_limit"]) if raw.get("wall_time_limit") is not None else None,
        nodes=raw.get("node_count"),
        tasks_per_node=raw.get("process_count_per_node"),
        tasks=raw.get("core_count"),
        cpus_per_task=raw.get("core_count_per_process"),
        gpus_per_node=raw.get("request_gpus"),
        gpu_type=raw.get("gpu_type"),
        mem_mb=memory_mb(raw["memory_limit"]) if raw.get("memory_limit") is not None else None,
        mem_per_cpu_mb=(memory_mb(raw["minimum_memory_per_processor"])
                        if raw.get("minimum_memory_per_processor") is not None else None),
        account=raw.get("account"),
        qos=raw.get("qos"),
        array=raw.get("job_array"),
        dependency=tuple(dependency),
        begin=raw.get("defer_job"),
        exclusive=bool(raw.get("node_exclusive", False)),
        stdout=raw.get("standard_output_file"),
        stderr=stderr or None,
        mail_events=tuple(e for e in events if e != "NONE"),
        mail_user=raw.get("email_address"),
        export_all=bool(raw.get("copy_environment", False)),
        export_vars=raw.get("copy_environment_variable"),
        nodelist=raw.get("request_specific_nodes"),
        extra_directives=tuple(raw.get("extra_directives") or ()),
        placement=raw.get("placement"),
        mem_per_gpu_mb=memory_mb(raw["memory_per_gpu"]) if raw.get("memory_per_gpu") is not None else None,
        mem_whole_node=raw.get("memory_whole_node") in (True, "true", "True"),
        scratch_mb=memory_mb(raw["local_scratch"]) if raw.get("local_scratch") is not None else None,
        scratch_resource=raw.get("local_scratch_resource"),
        gpu_resource=raw.get("gpu_resource"),
        gpu_type_resource=raw.get("gpu_type_resource"),
        parallel_environment=raw.get("parallel_environment"),
    )


def _optimisation(raw, notes):
    build = raw.get("opt_build") or {}
    acc = build.get("acc_type") or "none"
    app_type = raw["app_type"]
    section = raw.get("app_type-%s" % app_type) or {}
    config = section.get("config") or {}
    framework = version = parallelisation = library = affinity = None
    compilers = []
    if app_type in ("ai_training", "ai_inference"):
        framework = config.get("ai_framework")
        details = section.get("ai_framework-%s" % framework) or {}
        version = details.get("version")
        known = frameworks.FRAMEWORKS.get(framework)
        for option, (feature, _description) in (known.switches.items() if known else ()):
            if details.get(option):
                compilers.append(feature)
    else:
        parallelisation = config.get("parallelisation")
        if parallelisation == "opencc":
            parallelisation = "openacc"
            notes.append("parallelisation 'opencc' is read as 'openacc'")
        mpi = section.get("parallelisation-mpi") or {}
        library = mpi.get("library")
        version = mpi.get("version")
        affinity = (section.get("parallelisation-openmp") or {}).get("affinity")
    enable = raw.get("enable_opt_build")
    distributed = None
    if app_type == "ai_training" and config.get("distributed_training") in (True, "true", "True"):
        distributed = Distributed(processes_per_node=config.get("processes_per_node"),
                                  backend=config.get("distributed_backend", "auto"),
                                  launch=config.get("distributed_launch", "auto"))
    return Optimisation(
        app_type=app_type,
        enable_opt_build=True if enable is None else bool(enable),
        opt_build_asked=enable is not None and bool(enable),
        enable_autotuning=bool(raw.get("enable_autotuning", False)),
        cpu_type=build.get("cpu_type", "x86"),
        accelerator=acc,
        cpu_isa=build.get("cpu_isa"),
        cpu_microarch=build.get("cpu_microarch"),
        cpu_features=tuple(build.get("cpu_features") or ()),
        cuda_version=build.get("cuda_version"),
        rocm_version=build.get("rocm_version"),
        python_packages=tuple(build.get("python_packages") or ()),
        framework=framework,
        version=version,
        compilers=tuple(compilers),
        parallelisation=parallelisation,
        mpi_library=library,
        omp_affinity=affinity,
        data_location=_get(section, "data", "location"),
        tuning=tuple((k, tuple(v)) for k, v in sorted((raw.get("tuning") or {}).items())),
        distributed=distributed,
        model_kind=config.get("type") if app_type in ("ai_training", "ai_inference") else None,
    )


def build_request(doc):
    """Turn a valid document into a JobRequest (call ``validate`` first)."""
    doc, notes, warnings = compat.normalise(doc, schema.SCHEMA)
    job = doc["job"]
    raw_app = job.get("application") or {}
    raw_target = job.get("target") or {}
    opt = _optimisation(job["optimisation"], notes) if job.get("optimisation") else None

    threads = raw_app.get("threads")
    if threads is None and opt and job["optimisation"].get("app_type-hpc"):
        threads = _get(job["optimisation"], "app_type-hpc", "parallelisation-openmp", "number_of_threads")
    environment = tuple(sorted([(k, v if isinstance(v, str) else json.dumps(v))
                                for k, v in (raw_app.get("environment") or {}).items()]
                               + [(k, expanded_word(v)) for k, v in (raw_app.get("environment_expanded") or {}).items()]))
    binds = list(raw_app.get("bind_paths") or ())
    if opt and opt.data_location and end_anchored(schema.ABS_PATH).match(opt.data_location) and opt.data_location not in binds:
        binds.append(opt.data_location)
        notes.append("the data location %s is bound into the container" % opt.data_location)
    build = raw_app.get("build")
    app = Application(
        app_tag=raw_app.get("app_tag"),
        app_type=raw_app.get("app_type"),
        argv=_words(raw_app.get("executable")) + _words(raw_app.get("arguments")),
        container_runtime=raw_app.get("container_runtime"),
        mpi_ranks=raw_app.get("mpi_ranks", 1),
        threads=threads or 1,
        threads_given=threads is not None,
        minimal_efficiency=raw_app.get("minimal_efficiency"),
        build=Build(build["src"], build["build_command"], build.get("build_parallelism", 1)) if build else None,
        environment=environment,
        working_directory=raw_app.get("working_directory"),
        bind_paths=tuple(binds),
        launch_options=tuple(raw_app.get("launch_options") or ())
        + tuple("--%s=%s" % (key.replace("_", "-"), raw_app[key]) for key in ("cpu_bind", "gpu_bind")
                if raw_app.get(key)),
        modules=tuple(raw_app.get("modules") or ()),
        launcher=raw_app.get("launcher", "auto"),
        mpi_library=raw_app.get("mpi_library"),
        pre_execution=_lines(raw_app.get("pre-execution")),
        post_execution=_lines(raw_app.get("post-execution")),
    )
    scheduler = raw_target.get("job_scheduler_type")
    if scheduler is None:
        scheduler = schema.scheduler_registry.FALLBACK
        notes.append("no job_scheduler_type given: writing a plain bash script (target.job_scheduler_type: %s)"
                     % ", ".join(schema.scheduler_registry.NAMES))
    scheduler = SCHEDULER_ALIASES.get(scheduler, scheduler)
    target = Target(scheduler=scheduler, name=raw_target.get("name"),
                    engine=raw_target.get("container_engine", "apptainer"), image_dir=raw_target.get("image_dir"),
                    image_fetch=raw_target.get("image_fetch", "staged"),
                    login_host=raw_target.get("login_host"), work_dir=raw_target.get("work_dir"),
                    partition=raw_target.get("partition"), modules=tuple(raw_target.get("modules") or ()),
                    setup=_lines(raw_target.get("setup")), mpi_type=raw_target.get("mpi_type"))
    options = _job_options(job.get("job_options") or {}, notes)
    if options.queue is None and target.partition:
        options = dataclasses.replace(options, queue=target.partition)
        notes.append("partition %s comes from target.partition" % target.partition)
    return JobRequest(options=options, app=app, target=target, opt=opt, notes=tuple(notes), warnings=tuple(warnings))


def with_target_default(doc, key, value):
    """A copy of ``doc`` whose job.target has ``key`` = ``value`` unless the document gives it (a site setting)."""
    job = doc.get("job") if isinstance(doc, dict) else None
    if not isinstance(job, dict):
        return doc                  # parse() names what is wrong with the document
    target = job.get("target")
    if target is not None and not isinstance(target, dict):
        return doc
    if target and key in target:
        return doc
    return dict(doc, job=dict(job, target=dict(target or {}, **{key: value})))


def parse(doc):
    """Validate ``doc`` and return a JobRequest, or raise DslInvalid listing every problem."""
    found = problems(doc)
    if found:
        raise DslInvalid(found)
    return build_request(doc)
