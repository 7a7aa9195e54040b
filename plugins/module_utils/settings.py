# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 3 of the pipeline: run settings (ranks, nodes, threads, launcher, environment).

Pure function of the request and the chosen image. The performance model plugs in here.
"""

from __future__ import annotations

import dataclasses
import math

from ansible_collections.sodalite.modak.plugins.module_utils import distributed, frameworks, mpi, resilience, scaling, \
    secrets
from ansible_collections.sodalite.modak.plugins.module_utils.model import Settings
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry


def _is_mpi(req, ranks):
    opt = req.opt
    return (ranks > 1 or req.app.app_type == "mpi"
            or (opt is not None and opt.parallelisation == "mpi"))


def mpi_library(req, choice):
    """(the MPI library the program uses, where that was read): the chosen image's, else the optimisation
    section's, else the application's (a bare run's own statement)."""
    image, opt = choice.image, req.opt
    if image is not None and image.mpi:
        return image.mpi, "the image's MPI"
    if opt is not None and opt.mpi_library:
        return opt.mpi_library, "parallelisation-mpi.library"
    if req.app.mpi_library:
        return req.app.mpi_library, "application.mpi_library"
    return None, None


def pmi_plan(req, choice, launcher, is_mpi):
    """(library, srun's --mpi= value, notes, warnings) for the run."""
    library, source = mpi_library(req, choice)
    notes, warnings = [], []
    if library and req.app.mpi_library and library != req.app.mpi_library:
        warnings.append("application.mpi_library %s differs from %s (%s), which is used"
                        % (req.app.mpi_library, library, source))
    if launcher != "srun":
        return library, None, notes, warnings
    image_pmi = choice.image.mpi_pmi if choice.image is not None and choice.image.mpi == library else None
    pmi, why = mpi.pmi_for(library, req.target.mpi_type, image_pmi)
    if why:
        notes.append(why + ("" if req.target.mpi_type or not source else " (%s: %s)" % (source, library)))
    elif is_mpi:
        warnings.append("srun names no PMI (--mpi=): the site's MpiDefault decides how the ranks find each other "
                        "(Slurm's default 'none' makes Open MPI abort and MPICH run each rank alone); say the MPI "
                        "library (application.mpi_library, parallelisation-mpi.library) or the site's PMI "
                        "(target.mpi_type)")
    return library, pmi, notes, warnings


def framework_env(req, choice):
    """Switches a framework reads from the environment, for the features actually chosen."""
    opt, image = req.opt, choice.image
    if opt is None:
        return [], []
    offered = set(image.compilers) | set(image.math) if image else set(opt.compilers)
    env, notes = [], []
    if "xla" in opt.compilers and "xla" in offered and frameworks.env_for(opt.framework, "xla"):
        env.extend(frameworks.env_for(opt.framework, "xla"))
        notes.append("XLA auto-clustering on (TF_XLA_FLAGS)")
    if "onednn" in opt.compilers:
        env.extend(frameworks.env_for(opt.framework, "onednn"))
    if "inductor" in opt.compilers:
        notes.append("torch.compile must be called by the program; the image ships inductor" if
                     "inductor" in offered else "torch.compile requested but the image has no inductor")
    if image is not None and "onednn" in image.math:
        env.extend(frameworks.env_for(opt.framework, "onednn_math"))
    return env, notes


def thread_count(req, threads, advice, ranks_per_node, ranks, one_rank_per_task=True):
    """OMP_NUM_THREADS: the DSL's threads (or the autotuned choice's), else the CPUs each rank has when the job runs
    (the scheduler's run-time word)."""
    if req.app.threads_given or advice:
        return str(threads)
    return registry.scheduler_class(req.target.scheduler).rank_cpus(ranks_per_node, ranks, one_rank_per_task)


def plan(req, choice, advice=None):
    """Return the Settings for a request and its image Choice (and the performance model's advice)."""
    options, app, opt = req.options, req.app, req.opt
    notes = []
    ranks, threads = app.mpi_ranks, app.threads
    if advice:   # the performance model's configuration (perf.search.advise)
        threads = int(advice["config"]["threads"])
        notes.extend(advice.get("notes", ()))
    model = dict(choice.image.scaling) if choice.image and choice.image.scaling else None
    if model:
        ranks, threads, note = scaling.apply(model, ranks, threads, app.minimal_efficiency)
        if note:
            notes.append(note)
    elif app.minimal_efficiency:
        notes.append("minimal_efficiency %s not applied: the image has no scaling model" % app.minimal_efficiency)

    launcher = app.launcher
    if opt is not None and opt.distributed is not None:
        launcher = "none"      # the training's launcher starts its ranks (distributed.plan)
    elif launcher == "auto":
        launcher = registry.get(req.target.scheduler).default_launcher if _is_mpi(req, ranks) else "none"
    tasks, tpn = options.tasks, options.tasks_per_node
    # a launcher starts the tasks the job allocates: as many as core_count (or node_count x process_count_per_node)
    allocated = tasks or ((tpn or 1) * options.nodes if options.nodes else (tpn if tpn and ranks == 1 else None))
    if launcher != "none" and allocated and ranks < allocated:
        notes.append("%s: the launcher starts the %d tasks the job allocates"
                     % ("mpi_ranks not given" if ranks == 1 else "mpi_ranks %d raised" % ranks, allocated))
        ranks = allocated
    library, pmi, mpi_notes, mpi_warnings = pmi_plan(req, choice, launcher, _is_mpi(req, ranks))
    notes.extend(mpi_notes)
    if launcher == "none" and ranks > 1 and not (opt is not None and opt.distributed is not None):
        notes.append("launcher 'none' with %d ranks: the program must start its own processes" % ranks)

    # no node count: the scheduler spreads the tasks over as many nodes as it needs (Slurm --ntasks), never
    # pinned to one node; ``nodes`` is then the fewest nodes the tasks can fit (schedulers that count per node)
    nodes_fixed = options.nodes is not None
    nodes = options.nodes
    if nodes is None:
        nodes = int(math.ceil(max(ranks, tasks or 1) / float(tpn))) if tpn else 1
        if ranks > 1 and not tasks:
            tasks = ranks
    elif ranks > 1 and not tasks:
        if tpn is None or nodes * tpn < ranks:
            new_tpn = int(math.ceil(ranks / float(nodes)))
            if tpn is not None:
                notes.append("%d ranks do not fit on %d node(s) x %d task(s): tasks per node raised to %d"
                             % (ranks, nodes, tpn, new_tpn))
            tpn = new_tpn
        if nodes * tpn != ranks and ranks >= nodes:
            tasks = ranks       # uneven: exactly the ranks, at most tpn per node (fewer ranks than nodes would make
            #                     Slurm shrink the node count the DSL asked for)
    cpus_per_task = options.cpus_per_task or threads

    if tasks and launcher != "none" and ranks > tasks:
        notes.append("core_count %d raised to the %d ranks the launcher starts: a job step cannot start more "
                     "tasks than the job has (make mpi_ranks and core_count agree)" % (tasks, ranks))
        tasks = ranks

    vendor = opt.accelerator if opt and opt.accelerator in ("nvidia", "amd") else "none"
    gpus = options.gpus_per_node or 0
    if vendor != "none" and options.gpus_per_node == 0:
        vendor = "none"
        notes.append("request_gpus is 0: no GPU asked for although acc_type is %s" % opt.accelerator)
    elif vendor != "none" and not gpus:
        gpus = 1
        notes.append("the target has %s GPUs but request_gpus is not set: asking for 1 GPU per node "
                     "(request_gpus: 0 asks for none)" % vendor)
    if gpus and vendor == "none":
        vendor = "nvidia"
        notes.append("request_gpus without opt_build.acc_type: assuming NVIDIA GPUs (--nv)")

    env = [] if app.threads_unset and not advice else [
        ("OMP_NUM_THREADS", thread_count(req, threads, advice, tpn or int(math.ceil(ranks / float(nodes or 1))), ranks))]
    if threads > 1 or (opt and opt.omp_affinity):
        bind = opt.omp_affinity if opt and opt.omp_affinity else "close"
        env.extend([("OMP_PLACES", "cores"), ("OMP_PROC_BIND", bind)])
    fw_env, fw_notes = framework_env(req, choice)
    env.extend(fw_env)
    notes.extend(fw_notes)
    if req.resilience:   # the checkpoint directory and the restart count, for the program
        env.extend(resilience.environment(req.resilience, registry.get(req.target.scheduler)))
    user = dict(app.environment)
    user.update(secrets.env_pairs(app))
    env = [(k, v) for k, v in env if k not in user] + sorted(user.items())
    run = Settings(nodes=nodes, tasks_per_node=tpn, ranks=ranks, threads=threads, launcher=launcher,
                   env=tuple(env), cpus_per_task=cpus_per_task, gpus=gpus, gpu_vendor=vendor,
                   engine=req.target.engine, notes=tuple(notes),
                   extra_args=tuple(advice["args"]) if advice else (), tasks=tasks, mpi_library=library, pmi=pmi,
                   warnings=tuple(mpi_warnings), nodes_fixed=nodes_fixed, launch_options=app.launch_options)
    if opt is not None and opt.distributed is not None:
        run = distributed.plan(req, run)   # data-parallel training: its own ranks and allocation
    if run.launch_options and run.launcher != "srun":
        run = dataclasses.replace(run, warnings=run.warnings + (
            "application.launch_options are srun's and the launch starts no srun (launcher %s): not used"
            % run.launcher,))
    return run
