"""Scheduler backends, ReFrame style: the directive set each backend emits for the same job."""

from __future__ import annotations

import dataclasses
import re

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobOptions, Settings
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import hms, pbs_begin

FULL = JobOptions(
    job_name="full", queue="gpu", constraint="a100", walltime_s=30 * 3600, nodes=2, tasks_per_node=4,
    cpus_per_task=8, gpus_per_node=4, gpu_type="a100", mem_mb=65536, account="proj", qos="high",
    array="0-15%4", dependency=("afterok:11", "afterany:12"), begin="2026-12-01T08:30", exclusive=True,
    stdout="full-%j.out", stderr="full-%j.err", mail_events=("BEGIN", "END", "FAIL"),
    mail_user="me@example.org", export_all=True, export_vars="A,B=1", extra_directives=("--reservation=r1",))
# what PBS Pro can express of FULL: no QOS, node features nor array throttle (those are refused, see below)
FULL_PBSPRO = dataclasses.replace(FULL, qos=None, constraint=None, array="0-15")
# Torque has no GPU model (once dropped silently; refused now): its node property names the a100 nodes
FULL_TORQUE = dataclasses.replace(FULL, gpu_type=None)
FULL_SETTINGS = Settings(nodes=2, tasks_per_node=4, ranks=8, threads=8, launcher="srun", env=(),
                         cpus_per_task=8, gpus=4, gpu_vendor="nvidia")
MINIMAL = JobOptions(job_name="min")
MINIMAL_SETTINGS = Settings(nodes=1, tasks_per_node=None, ranks=1, threads=1, launcher="none", env=())


def _expected_slurm_full():
    return {
        "#SBATCH --job-name=full", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "#SBATCH --cpus-per-task=8",
        "#SBATCH --time=30:00:00", "#SBATCH --partition=gpu", "#SBATCH --account=proj", "#SBATCH --qos=high",
        "#SBATCH --constraint=a100", "#SBATCH --mem=65536M", "#SBATCH --gres=gpu:a100:4",
        "#SBATCH --array=0-15%4", "#SBATCH --dependency=afterok:11,afterany:12",
        "#SBATCH --begin=2026-12-01T08:30", "#SBATCH --exclusive", "#SBATCH --mail-type=BEGIN,END,FAIL",
        "#SBATCH --mail-user=me@example.org", "#SBATCH --export=ALL,A,B=1", "#SBATCH --output=full-%j.out",
        "#SBATCH --error=full-%j.err", "#SBATCH --reservation=r1",
    }


def _expected_pbspro_full():
    return {
        "#PBS -N full", "#PBS -l select=2:ncpus=32:mpiprocs=4:ompthreads=8:ngpus=4:gpu_type=a100:mem=65536mb",
        "#PBS -l place=excl", "#PBS -l walltime=30:00:00", "#PBS -q gpu", "#PBS -A proj",
        "#PBS -J 0-15", "#PBS -W depend=afterok:11,afterany:12", "#PBS -a 202612010830.00", "#PBS -m abe",
        "#PBS -M me@example.org", "#PBS -V", "#PBS -v A,B=1", "#PBS -o full-%j.out", "#PBS -e full-%j.err",
        "#PBS --reservation=r1",
    }


def _expected_torque_full():
    return {
        "#PBS -N full", "#PBS -l nodes=2:ppn=32:gpus=4:a100", "#PBS -l walltime=30:00:00", "#PBS -l mem=65536mb",
        "#PBS -q gpu", "#PBS -A proj", "#PBS -l qos=high", "#PBS -t 0-15%4",
        "#PBS -W depend=afterok:11,afterany:12", "#PBS -a 202612010830.00", "#PBS -n", "#PBS -m abe",
        "#PBS -M me@example.org", "#PBS -V", "#PBS -v A,B=1", "#PBS -o full-%j.out", "#PBS -e full-%j.err",
        "#PBS --reservation=r1",
    }


def _expected_local_full():
    return {"# modak: local run of job full"}


def _expected_slurm_minimal():
    return {"#SBATCH --job-name=min", "#SBATCH --nodes=1", "#SBATCH --output=min-%j.out"}   # Settings says fixed


def _expected_pbspro_minimal():
    return {"#PBS -N min", "#PBS -l select=1:ncpus=1:mpiprocs=1", "#PBS -j oe"}


def _expected_torque_minimal():
    return {"#PBS -N min", "#PBS -l nodes=1:ppn=1", "#PBS -j oe"}


def _expected_local_minimal():
    return {"# modak: local run of job min"}


@pytest.fixture(params=["slurm", "pbspro", "torque", "local"])
def scheduler(request):
    return registry.get(request.param)


@pytest.mark.parametrize("variant,options,settings", [("full", FULL, FULL_SETTINGS),
                                                      ("minimal", MINIMAL, MINIMAL_SETTINGS)])
def test_directive_sets(scheduler, variant, options, settings):
    if options is FULL:
        options = {"pbspro": FULL_PBSPRO, "torque": FULL_TORQUE}.get(scheduler.name, FULL)
    lines, _warnings = scheduler.preamble(options, settings)
    expected = globals()["_expected_%s_%s" % (scheduler.name, variant)]()
    assert set(lines) == expected
    assert len(lines) == len(set(lines)), "no directive twice"
    for line in lines:
        assert re.match(r"^#\S* ?\S", line) and "\n" not in line


def test_pbspro_refuses_what_it_cannot_express():
    """Once dropped with a warning; now refused with the DSL path of each field."""
    with pytest.raises(DslInvalid) as caught:
        registry.get("pbspro").preamble(FULL, FULL_SETTINGS)
    paths = sorted(p.path for p in caught.value.problems)
    assert paths == ["job.job_options.architecture_constraint", "job.job_options.job_array", "job.job_options.qos"]
    assert "array throttle" in str(caught.value)
    _lines, warnings = registry.get("local").preamble(FULL, FULL_SETTINGS)
    assert "queue" in warnings[0] and "node_count" in warnings[0]


def test_aliases_and_unknown():
    assert registry.get("pbs").name == "pbspro"
    assert registry.get("none").name == "local" and registry.get("bash").name == "local"
    with pytest.raises(KeyError):
        registry.get("lsf")


@pytest.mark.parametrize("seconds,text", [(59, "00:00:59"), (3600, "01:00:00"), (86400, "24:00:00"),
                                          (108000, "30:00:00"), (100 * 3600 + 61, "100:01:01")])
def test_walltime_is_hh_mm_ss_even_past_a_day(seconds, text):
    assert hms(seconds) == text


def test_pbs_begin():
    assert pbs_begin("2026-01-02") == "202601020000.00"
    assert pbs_begin("2026-01-02T03:04:05") == "202601020304.05"


def test_pbs_job_name_starts_with_a_letter():
    lines, _warnings = registry.get("torque").preamble(JobOptions(job_name="42run"), MINIMAL_SETTINGS)
    assert "#PBS -N j42run" in lines


def test_slurm_gpus_without_type():
    options = JobOptions(job_name="g", gpus_per_node=2)
    settings = Settings(nodes=1, tasks_per_node=None, ranks=1, threads=1, launcher="none", env=(), gpus=2)
    lines, _warnings = registry.get("slurm").preamble(options, settings)
    assert "#SBATCH --gres=gpu:2" in lines


def test_local_enforces_walltime_and_redirects():
    local = registry.get("local")
    assert local.run_prefix(JobOptions(walltime_s=90)) == ["timeout", "--signal=TERM", "--kill-after=30", "90s"]
    guard = '[ "${MODAK_OUTPUT_OPENED:-}" = "$PPID" ] || '     # batch_job opened the files for the script
    assert local.redirect_lines(JobOptions(stdout="o.txt")) == [guard + "exec >o.txt 2>&1"]
    assert local.redirect_lines(JobOptions(stdout="o.txt", stderr="e.txt")) == [guard + "exec >o.txt 2>e.txt"]
    assert local.redirect_lines(JobOptions(stderr="e.txt")) == [guard + "exec 2>e.txt"]
    assert local.redirect_lines(JobOptions()) == ["exec 2>&1"]


def test_local_output_named_like_a_descriptor():
    local = registry.get("local")
    assert local.redirect_lines(JobOptions(stdout="0", stderr="2.err"))[0].endswith(" || exec >./0 2>./2.err")
