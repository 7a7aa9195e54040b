# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JobRequest of a canonical, valid document: defaults applied, values read (dsl_values)."""

from __future__ import annotations

import dataclasses
import json

from ansible_collections.sodalite.modak.plugins.module_utils import frameworks, resilience, schema, shell
from ansible_collections.sodalite.modak.plugins.module_utils.dsl_values import (
    expanded_word, mail_events, memory_mb, nested, walltime_seconds)
from ansible_collections.sodalite.modak.plugins.module_utils.model import (
    Application, Build, Candidate, Distributed, JobOptions, JobRequest, Optimisation, Target)

SCHEDULER_ALIASES = schema.scheduler_registry.ALIASES


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
        mem_whole_node=raw.get("memory_whole_node") is True,
        scratch_mb=memory_mb(raw["local_scratch"]) if raw.get("local_scratch") is not None else None,
        scratch_resource=raw.get("local_scratch_resource"),
        gpu_resource=raw.get("gpu_resource"),
        gpu_type_resource=raw.get("gpu_type_resource"),
        parallel_environment=raw.get("parallel_environment"),
    )


def _optimisation(raw, notes, launcher="auto"):
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
    if app_type == "ai_training" and config.get("distributed_training") is True:
        distributed = Distributed(processes_per_node=config.get("processes_per_node"),
                                  backend=config.get("distributed_backend", "auto"),
                                  launch=launcher if launcher != "auto" else config.get("distributed_launch", "auto"))
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
        data_location=nested(section, "data", "location"),
        tuning=tuple((k, tuple(v)) for k, v in sorted((raw.get("tuning") or {}).items())),
        distributed=distributed,
        model_kind=config.get("type") if app_type in ("ai_training", "ai_inference") else None,
    )


def build(doc, notes=(), warnings=()):
    """The JobRequest of a canonical document that dsl_check found valid; ``notes`` and ``warnings`` (what
    compat.normalise said) join the request's."""
    notes, warnings = list(notes), list(warnings)
    job = doc["job"]
    raw_app = job.get("application") or {}
    raw_target = job.get("target") or {}
    opt = _optimisation(job["optimisation"], notes, raw_app.get("launcher", "auto")) if job.get("optimisation") else None

    threads = raw_app.get("threads")
    if threads is None and opt and job["optimisation"].get("app_type-hpc"):
        threads = nested(job["optimisation"], "app_type-hpc", "parallelisation-openmp", "number_of_threads")
    environment = tuple(sorted([(k, v if isinstance(v, str) else json.dumps(v))
                                for k, v in (raw_app.get("environment") or {}).items()]
                               + [(k, expanded_word(v)) for k, v in (raw_app.get("environment_expanded") or {}).items()]))
    binds = list(raw_app.get("bind_paths") or ())
    if opt and opt.data_location and schema.end_anchored(schema.ABS_PATH).match(opt.data_location) and opt.data_location not in binds:
        binds.append(opt.data_location)
        notes.append("the data location %s is bound into the container" % opt.data_location)
    build = raw_app.get("build")
    app = Application(
        app_tag=raw_app.get("app_tag"),
        app_type=raw_app.get("app_type"),
        argv=_words(raw_app.get("executable")) + _words(raw_app.get("arguments")),
        container_runtime=raw_app.get("container_runtime"),
        mpi_ranks=raw_app.get("mpi_ranks", 1),
        threads=threads if isinstance(threads, int) else 1,
        threads_given=isinstance(threads, int),
        threads_unset=threads == "unset",
        minimal_efficiency=raw_app.get("minimal_efficiency"),
        build=Build(build["src"], build["build_command"], build.get("build_parallelism", 1)) if build else None,
        environment=environment,
        secrets=tuple(sorted((name, kind, ref) for name, form in (raw_app.get("secrets") or {}).items()
                             for kind, ref in form.items())),
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
    res, said = resilience.read(job.get("resilience"), options, scheduler, walltime_seconds)
    notes.extend(said)
    placement = tuple(Candidate(c["name"], c.get("hardware_class"))
                      for c in (job.get("placement") or {}).get("partitions", ()))
    return JobRequest(options=options, app=app, target=target, opt=opt, resilience=res, placement=placement,
                      notes=tuple(notes), warnings=tuple(warnings))
