"""What each scheduler is asked for, from the DSL through the pipeline: tasks, GPUs, output files, integers.

Table-driven per scheduler. The same requests were read back by the real Slurm (sbatch --hold +
scontrol show job -o) and by Slurm's qsub wrapper (-sbatchline); see docs/scheduler.md.
"""

from __future__ import annotations

import copy
import json

import pytest
from helpers import with_

from ansible_collections.sodalite.modak.plugins.module_utils import pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import opt

BASE = {"job": {"job_options": {"job_name": "t"}, "application": {"executable": "./app"},
                "target": {"job_scheduler_type": "slurm"}}}


def doc_for(scheduler, **options):
    doc = copy.deepcopy(BASE)
    doc["job"]["target"]["job_scheduler_type"] = scheduler
    doc["job"]["job_options"].update(options)
    return doc


def directives(doc, catalog):
    result = pipeline.optimise(doc, catalog)
    return list(result.script.directives), result


# ---------------------------------------------------------------- defect 1: one formatting style, strict

def test_slurm_core_count_is_a_number_not_a_format(catalog):
    lines, _result = directives(doc_for("slurm", core_count=40), catalog)
    assert "#SBATCH --ntasks=40" in lines
    assert not any("%d" in line for line in lines)


@pytest.mark.parametrize("fmt", ["--ntasks=%d", "--ntasks=%s{0}", "--ntasks", "{0}={1}", "{}", "{name}"])
def test_opt_refuses_a_pattern_it_cannot_fill(fmt):
    with pytest.raises(ValueError):
        opt(fmt, 4)
    with pytest.raises(ValueError):
        opt(fmt, None)   # refused even when the value is missing, so a wrong pattern cannot hide


def test_opt_fills_its_one_field():
    assert opt("--mem={0}M", 512) == "--mem=512M"
    assert opt("--output={0}", "a-%j.out") == "--output=a-%j.out"
    assert opt("--x={0}", None) == "" and opt("--x={0}", False) == ""


# ---------------------------------------------------------------- defect 2: core_count on every scheduler

CORE_COUNT = [
    # (job_options, slurm lines, torque nodes, pbspro select)
    # no node count: Slurm spreads the 40 tasks (no --nodes=1 pinning, as the centres write it); PBS Pro gets one
    # chunk per task, which it places itself; Torque counts per node and keeps the fewest nodes
    ({"core_count": 40}, ["--ntasks=40"], "nodes=1:ppn=40", "select=40:ncpus=1:mpiprocs=1"),
    ({"core_count": 40, "node_count": 2}, ["--nodes=2", "--ntasks=40"], "nodes=2:ppn=20",
     "select=2:ncpus=20:mpiprocs=20"),
    ({"core_count": 41, "node_count": 2}, ["--nodes=2", "--ntasks=41"], "nodes=1:ppn=21+1:ppn=20",
     "select=1:ncpus=21:mpiprocs=21+1:ncpus=20:mpiprocs=20"),
    ({"core_count": 8, "node_count": 2, "core_count_per_process": 4},
     ["--nodes=2", "--ntasks=8", "--cpus-per-task=4"], "nodes=2:ppn=16", "select=2:ncpus=16:mpiprocs=4"),
    ({"node_count": 2, "process_count_per_node": 4}, ["--nodes=2", "--ntasks-per-node=4"], "nodes=2:ppn=4",
     "select=2:ncpus=4:mpiprocs=4"),
]


@pytest.mark.parametrize("options,slurm,torque,pbspro", CORE_COUNT)
def test_core_count_is_the_total_number_of_tasks(options, slurm, torque, pbspro, catalog):
    lines, result = directives(doc_for("slurm", **options), catalog)
    assert set("#SBATCH " + line for line in slurm) <= set(lines)
    assert ("node_count" in options) == any(line.startswith("#SBATCH --nodes=") for line in lines)
    lines, result = directives(doc_for("torque", **options), catalog)
    assert "#PBS -l %s" % torque in lines
    assert not any("covered" in w for w in result.warnings)
    lines, result = directives(doc_for("pbspro", **options), catalog)
    assert "#PBS -l %s" % pbspro in lines
    assert not any("covered" in w for w in result.warnings)


def test_sodalite_blueprint_job_gets_its_40_cores(catalog):
    """What SODALITE's blueprint builder sends: core_count 40, one node (it got nodes=1:ppn=1 before)."""
    for scheduler, expected in (("torque", "#PBS -l nodes=1:ppn=40"),
                                ("pbspro", "#PBS -l select=1:ncpus=40:mpiprocs=40")):
        lines, _result = directives(doc_for(scheduler, core_count=40, node_count=1, wall_time_limit="12:00:00"), catalog)
        assert expected in lines


WALL_TIME = [
    # (scheduler, the line that carries "1-02:30", sbatch's days-hours:minutes: 26 h 30 min)
    ("slurm", "#SBATCH --time=26:30:00"), ("pbspro", "#PBS -l walltime=26:30:00"),
    ("torque", "#PBS -l walltime=26:30:00"), ("gridengine", "#$ -l h_rt=26:30:00"),
    ("flux", "# flux: --time-limit=95400s"),
]


@pytest.mark.parametrize("scheduler,line", WALL_TIME)
@pytest.mark.parametrize("value", ["1-02:30", "1-2:30:00", "P1DT2H30M", 95400, "95400"])
def test_wall_time_in_sbatch_forms_reaches_every_scheduler(scheduler, line, value, catalog):
    lines, _result = directives(doc_for(scheduler, wall_time_limit=value), catalog)
    assert line in lines


def test_wall_time_days_hours_is_not_read_as_seconds(catalog):
    lines, _result = directives(doc_for("slurm", wall_time_limit="1-2"), catalog)
    assert "#SBATCH --time=26:00:00" in lines
    script = pipeline.optimise(doc_for("local", wall_time_limit="1-2"), catalog).script.text
    assert "timeout --signal=TERM --kill-after=30 93600s" in script


@pytest.mark.parametrize("scheduler", ["torque", "pbspro"])
def test_core_count_above_process_count_per_node_is_said(scheduler, catalog):
    _lines, result = directives(doc_for(scheduler, core_count=100, node_count=2, process_count_per_node=40), catalog)
    assert any("core_count 100 does not fit" in w for w in result.warnings)


MORE_RANKS = {"slurm": "--ntasks=80", "torque": "-l nodes=2:ppn=40", "pbspro": "-l select=2:ncpus=40:mpiprocs=40"}


@pytest.mark.parametrize("scheduler", sorted(MORE_RANKS))
def test_more_ranks_than_core_count_raise_the_tasks_and_say_so(scheduler, catalog):
    """The original's mpi_test.json: core_count 40, 80 ranks; a step cannot start more tasks than the job has."""
    doc = doc_for(scheduler, core_count=40, node_count=2, process_count_per_node=40)
    doc["job"]["application"].update({"mpi_ranks": 80, "app_type": "mpi"})
    lines, result = directives(doc, catalog)
    assert any(line.endswith(MORE_RANKS[scheduler]) for line in lines), lines
    assert any("core_count 40 raised to the 80 ranks the launcher starts" in n for n in result.explanation)


# ---------------------------------------------------------------- defect 7: GPUs with acc_type

def gpu_doc(scheduler, request_gpus=None):
    doc = with_(doc_for(scheduler), "job.optimisation", {"app_type": "hpc", "opt_build": {"cpu_type": "x86",
                                                                                          "acc_type": "nvidia"},
                                                         "app_type-hpc": {"config": {"parallelisation": "openmp"}}})
    doc["job"]["application"]["container_runtime"] = "docker://r.example.org/app:1"
    if request_gpus is not None:
        doc["job"]["job_options"]["request_gpus"] = request_gpus
    return doc


@pytest.mark.parametrize("scheduler,gpu_line", [("slurm", "#SBATCH --gres=gpu:1"),
                                                ("torque", "#PBS -l nodes=1:ppn=1:gpus=1"),
                                                ("pbspro", "#PBS -l select=1:ncpus=1:mpiprocs=1:ngpus=1")])
def test_nvidia_asks_one_gpu_by_default_and_none_with_request_gpus_0(scheduler, gpu_line, catalog):
    lines, result = directives(gpu_doc(scheduler), catalog)
    assert gpu_line in lines and "--nv" in result.script.text
    assert any("request_gpus: 0 asks for none" in n for n in result.explanation)
    lines, result = directives(gpu_doc(scheduler, request_gpus=0), catalog)
    assert not any("gpu" in line for line in lines)
    assert "--nv" not in result.script.text
    assert any("request_gpus is 0" in n for n in result.explanation)


# ---------------------------------------------------------------- defect 8: combine_stdout_stderr wins

@pytest.mark.parametrize("combine", [True, "true"])
@pytest.mark.parametrize("scheduler,present,absent", [
    ("slurm", ["#SBATCH --output=o.txt"], ["--error"]),
    ("torque", ["#PBS -o o.txt", "#PBS -j oe"], ["#PBS -e e.txt"]),
    ("pbspro", ["#PBS -o o.txt", "#PBS -j oe"], ["#PBS -e e.txt"]),
    ("local", ["exec >o.txt 2>&1"], ["e.txt"]),
])
def test_combine_stdout_stderr_true_wins_over_an_error_file(scheduler, present, absent, combine, catalog):
    doc = doc_for(scheduler, standard_output_file="o.txt", standard_error_file="e.txt", combine_stdout_stderr=combine)
    result = pipeline.optimise(doc, catalog)
    text = result.script.text
    assert all(p in text for p in present) and not any(a in text for a in absent)
    assert any("standard_error_file e.txt is not used" in n for n in result.explanation)


def test_an_error_file_without_combine_stays_separate(catalog):
    text = pipeline.optimise(doc_for("slurm", standard_error_file="e.txt"), catalog).script.text
    assert "#SBATCH --error=e.txt" in text


# ---------------------------------------------------------------- defect 14: integers are integers

@pytest.mark.parametrize("field", ["job.job_options.node_count", "job.job_options.process_count_per_node",
                                   "job.job_options.core_count", "job.job_options.core_count_per_process",
                                   "job.job_options.request_gpus", "job.application.mpi_ranks",
                                   "job.application.threads"])
@pytest.mark.parametrize("text", ["2.0", "100.0", "NaN", "Infinity", "1e2"])
def test_integer_fields_refuse_floats_and_nan(field, text, catalog):
    doc = json.loads(json.dumps(with_(BASE, field, "@@")).replace('"@@"', text))   # JSON text as a user writes it
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc, catalog)
    assert field in [p.path for p in err.value.problems]


@pytest.mark.parametrize("field,value", [("job_array", "\u0660-\u0669"), ("wall_time_limit", "\u0661:00:00"),
                                         ("memory_limit", "\u0664G"), ("job_dependency", "afterok:\u0661\u0662"),
                                         ("defer_job", "\u0662\u0660\u0662\u0666-01-01"),
                                         ("wall_time_limit", "\uff11:00:00")])
def test_non_ascii_digits_never_reach_a_directive(field, value, catalog):
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc_for("slurm", **{field: value}), catalog)
    assert "job.job_options." + field in [p.path for p in err.value.problems]


def test_minimal_efficiency_refuses_nan(catalog):
    doc = json.loads(json.dumps(BASE).replace('"./app"', '"./app", "minimal_efficiency": NaN'))
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc, catalog)
    assert "job.application.minimal_efficiency" in [p.path for p in err.value.problems]


# ---------------------------------------------------------------- defect 15: output files per job

@pytest.mark.parametrize("scheduler,array,present,absent", [
    ("slurm", None, ["#SBATCH --output=t-%j.out"], ["job.out", "--error"]),
    ("slurm", "0-3", ["#SBATCH --output=t-%A_%a.out"], ["job.out", "--error"]),
    ("torque", None, ["#PBS -j oe"], ["job.out", "#PBS -o"]),
    ("torque", "0-3", ["#PBS -t 0-3", "#PBS -j oe"], ["job.out", "#PBS -o"]),
    ("pbspro", "0-3", ["#PBS -J 0-3", "#PBS -j oe"], ["job.out", "#PBS -o"]),
    ("local", None, ["exec 2>&1"], ["job.out", "exec >"]),
])
def test_no_output_file_named_means_the_schedulers_unique_names(scheduler, array, present, absent, catalog):
    options = {"job_array": array} if array else {}
    text = pipeline.optimise(doc_for(scheduler, **options), catalog).script.text
    assert all(p in text for p in present), text
    assert not any(a in text for a in absent), text


# ---------------------------------------------------------------- issue 18: memory requests and site resources

@pytest.mark.parametrize("fields,path", [
    ({"memory_limit": "4G", "memory_whole_node": True}, "memory_whole_node"),
    ({"minimum_memory_per_processor": "1G", "memory_per_gpu": "8G"}, "memory_per_gpu"),
    ({"memory_per_gpu": "8G", "request_gpus": 0}, "memory_per_gpu"),
    ({"placement": "spread"}, "placement"),
    ({"local_scratch_resource": "tmp fs"}, "local_scratch_resource"),
])
def test_memory_requests_exclude_each_other_and_site_names_are_plain(fields, path, catalog):
    with pytest.raises(DslInvalid) as caught:
        pipeline.optimise(doc_for("slurm", **fields), catalog)
    assert "job.job_options." + path in [p.path for p in caught.value.problems]


def test_whole_node_memory_alone_is_accepted(catalog):
    lines, _result = directives(doc_for("slurm", node_count=2, memory_whole_node=True), catalog)
    assert "#SBATCH --mem=0" in lines and not any(line.startswith("#SBATCH --mem=0M") for line in lines)


def test_mpi_ranks_fewer_than_core_count_are_raised_and_said(catalog):
    doc = doc_for("slurm", core_count=8)
    doc["job"]["application"]["mpi_ranks"] = 4
    result = pipeline.optimise(doc, catalog)
    assert result.settings.ranks == 8 and "srun --ntasks=8" in result.script.text
    assert any("mpi_ranks 4 raised" in note for note in result.explanation)
