"""Grid Engine: the #$ directive set, exact argv, and the parsing of qsub/qstat/qacct answers (table-driven)."""

from __future__ import annotations

import dataclasses

import pytest
from fake_runner import FakeRunner

from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobOptions, Settings
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import gridengine, registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import digest
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import Request, run

FULL = JobOptions(
    job_name="full", queue="gpu", constraint="a100", walltime_s=30 * 3600, nodes=2, tasks_per_node=4,
    cpus_per_task=8, gpus_per_node=4, gpu_type="a100", mem_mb=65536, account="proj", qos="high",
    array="1-15%4", dependency=("afterok:11", "afterany:12"), begin="2026-12-01T08:30", exclusive=True,
    stdout="full-%j.out", stderr="full-%j.err", mail_events=("BEGIN", "END", "FAIL"),
    mail_user="me@example.org", export_all=True, export_vars="A,B=1", extra_directives=("-l scratch=10G",))
FULL_SETTINGS = Settings(nodes=2, tasks_per_node=4, ranks=8, threads=8, launcher="mpirun", env=(),
                         cpus_per_task=8, gpus=4, gpu_vendor="nvidia")
MINIMAL_SETTINGS = Settings(nodes=1, tasks_per_node=None, ranks=1, threads=1, launcher="none", env=())


def test_full_directive_set():
    """What Grid Engine can express of the full job: GPUs on one node, the site's GPU resource."""
    options = dataclasses.replace(FULL, nodes=1, qos=None, constraint=None, gpu_type=None, exclusive=False,
                                  dependency=("afterany:11", "afterany:12"), gpu_resource="gpus")
    settings = dataclasses.replace(FULL_SETTINGS, nodes=1)
    lines, warnings = registry.get("gridengine").preamble(options, settings)
    assert lines == [
        "#$ -N full", "#$ -S /bin/bash", "#$ -cwd", "#$ -pe smp 32", "#$ -l h_rt=30:00:00", "#$ -l h_vmem=2048M",
        "#$ -l gpus=4", "#$ -q gpu", "#$ -A proj", "#$ -t 1-15", "#$ -tc 4", "#$ -hold_jid 11,12",
        "#$ -a 202612010830.00", "#$ -m abe", "#$ -M me@example.org", "#$ -V", "#$ -v A,B=1",
        "#$ -o full-$JOB_ID.out", "#$ -e full-$JOB_ID.err", "#$ -l scratch=10G"]
    assert warnings == []


def test_what_grid_engine_cannot_express_is_refused():
    """Once left out with a warning (GPUs too); now each field is refused with its DSL path."""
    with pytest.raises(DslInvalid) as caught:
        registry.get("gridengine").preamble(FULL, FULL_SETTINGS)
    assert sorted(p.path.rsplit(".", 1)[1] for p in caught.value.problems) == [
        "architecture_constraint", "gpu_type", "job_dependency", "node_exclusive", "qos", "request_gpus"]


def test_minimal_directive_set():
    lines, warnings = registry.get("sge").preamble(JobOptions(job_name="9min"), MINIMAL_SETTINGS)
    # no output named: Grid Engine's own <name>.o<job id> in the working directory (-cwd), one per array task
    assert lines == ["#$ -N j9min", "#$ -S /bin/bash", "#$ -cwd", "#$ -j y"]
    assert warnings == []


@pytest.mark.parametrize("options,settings,want", [
    (JobOptions(mem_per_cpu_mb=500), MINIMAL_SETTINGS, ["-l h_vmem=500M"]),
    (JobOptions(mem_mb=1000), Settings(nodes=1, tasks_per_node=3, ranks=3, threads=1, launcher="mpirun", env=()),
     ["-pe smp 3", "-l h_vmem=334M"]),
    (JobOptions(array="3"), MINIMAL_SETTINGS, ["-t 3"]),
    (JobOptions(array="1-9:2"), MINIMAL_SETTINGS, ["-t 1-9:2"]),
    (JobOptions(array="0-3"), MINIMAL_SETTINGS, "job_array"),     # task ids start at 1: refused
    (JobOptions(array="1,3,5"), MINIMAL_SETTINGS, "job_array"),
    (JobOptions(dependency=("afterany:7:8+5",)), MINIMAL_SETTINGS, ["-hold_jid 7,8"]),
    (JobOptions(dependency=("singleton",)), MINIMAL_SETTINGS, "job_dependency"),
    (JobOptions(stdout="o-%x-%A_%a.txt"), MINIMAL_SETTINGS, ["-o o-$JOB_NAME-$JOB_ID_$TASK_ID.txt"]),
    (JobOptions(), Settings(nodes=1, tasks_per_node=None, ranks=8, threads=1, launcher="mpirun", env=(), tasks=8,
                            nodes_fixed=False), ["-pe mpi 8"]),          # MPI without a node count: over hosts
    (JobOptions(), Settings(nodes=1, tasks_per_node=None, ranks=1, threads=4, launcher="none", env=(),
                            cpus_per_task=4, nodes_fixed=False), ["-pe smp 4"]),   # threads: one host
    (JobOptions(parallel_environment="mpi_rr"),
     Settings(nodes=1, tasks_per_node=None, ranks=8, threads=1, launcher="mpirun", env=(), tasks=8), ["-pe mpi_rr 8"]),
    (JobOptions(gpus_per_node=2), dataclasses.replace(MINIMAL_SETTINGS, gpus=2), ["-l gpu=2"]),
    (JobOptions(scratch_mb=15360, scratch_resource="tmpfs"), MINIMAL_SETTINGS, ["-l tmpfs=15360M"]),
    (JobOptions(scratch_mb=15360), MINIMAL_SETTINGS, "local_scratch"),
    (JobOptions(mem_mb=4096), Settings(nodes=1, tasks_per_node=None, ranks=8, threads=1, launcher="mpirun", env=(),
                                       tasks=8, nodes_fixed=False), "memory_limit"),
    (JobOptions(mem_whole_node=True), MINIMAL_SETTINGS, "memory_whole_node"),
    (JobOptions(placement="scatter"), MINIMAL_SETTINGS, "placement"),
], ids=["mem-per-cpu", "mem-per-node", "array-one", "array-step", "array-zero", "array-list", "hold", "singleton",
        "output-patterns", "mpi-spread", "threads-one-host", "pe-named", "gpus", "scratch", "scratch-no-resource",
        "mem-per-node-spread", "mem-whole-node", "placement"])
def test_directive_table(options, settings, want):
    """Each directive, or the field refused with its path (a string)."""
    if isinstance(want, str):
        with pytest.raises(DslInvalid) as caught:
            gridengine.GridEngine().directives(options, settings)
        assert [p.path for p in caught.value.problems] == ["job.job_options." + want]
        return
    lines, _warnings = gridengine.GridEngine().directives(options, settings)
    base = {"-N job", "-S /bin/bash", "-cwd", "-o job.out", "-j y"}
    assert [line for line in lines if line not in base] == want


S = "/w/job.sge"
ARGV = [
    ("submit", gridengine.submit_argv(S, digest="abc"), ["qsub", "-terse", "-ac", "modak=abc", S]),
    ("submit extra", gridengine.submit_argv(S, ["-q", "all.q"], "abc"),
     ["qsub", "-terse", "-ac", "modak=abc", "-q", "all.q", S]),
    ("check mode", gridengine.submit_argv(S, ["-q", "all.q"], "abc", verify=True),
     ["qsub", "-terse", "-w", "v", "-q", "all.q", S]),
    ("status", gridengine.show_argv("42"), ["qstat", "-j", "42"]),
    ("states", gridengine.list_argv(), ["qstat", "-u", "*"]),
    ("accounting", gridengine.accounting_argv("42"), ["qacct", "-j", "42"]),
    ("cancel", gridengine.cancel_argv("42"), ["qdel", "42"]),
]


@pytest.mark.parametrize("name,got,want", ARGV, ids=[a[0] for a in ARGV])
def test_argv(name, got, want):
    assert got == want


@pytest.mark.parametrize("out,want", [("42\n", "42"), ("43.1-10:1\n", "43")])
def test_job_id(out, want):
    assert gridengine.parse_job_id(out) == want


def test_a_script_with_hash_dollar_directives_is_grid_engines():
    assert registry.detect("#!/bin/bash\n#$ -N x\n#$ -cwd\nhostname\n") == "gridengine"
    assert gridengine.job_name("#!/bin/bash\n#$ -N x\n", S) == "x"
    assert gridengine.job_name("#!/bin/bash\n#$ -N x\n", S, ["-N", "y"]) == "y"
    assert gridengine.job_name("#!/bin/bash\n", S) == "job.sge"


@pytest.mark.parametrize("fields,want", [
    ({"failed": "0", "exit_status": "0"}, ("COMPLETED", 0)),
    ({"failed": "0", "exit_status": "3"}, ("FAILED", 3)),
    ({"failed": "100 : assumedly after job", "exit_status": "137", "deleted_by": "root@vm"}, ("CANCELLED", 137)),
    ({"failed": "37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", "exit_status": "137"}, ("TIMEOUT", 137)),
    ({"failed": "26  : opening input/output file", "exit_status": "0"}, ("FAILED", 0)),
])
def test_ended(fields, want):
    assert gridengine.ended(fields) == want


# answers recorded from Son of Grid Engine 8.1.9 (tests/integration/gridengine), trimmed
QSTAT_J = """==============================================================
job_number:                 2
exec_file:                  job_scripts/2
owner:                      root
sge_o_workdir:              /w
cwd:                        /w
merge:                      y
hard resource_list:         h_rt=60,h_vmem=100M
mail_options:               be
job_name:                   probe
stdout_path_list:           NONE:NONE:probe-$JOB_ID.out
shell_list:                 NONE:/bin/bash
env_list:                   TERM=NONE
parallel environment:  smp range: 2
job-array tasks:            1-3:2
context:                    modak=abc
scheduling info:            Job is in hold state
"""
QSTAT_U = """job-ID  prior   name       user         state submit/start at     queue                          slots ja-task-ID
-----------------------------------------------------------------------------------------------------------------
      4 0.50000 sleep      root         r     11/22/2026 20:20:08 all.q@vm                           1
      2 0.00000 probe      root         hqw   11/22/2026 20:20:07                                    2 1,3
"""
QACCT = """==============================================================
qname        all.q
hostname     vm
jobname      %s
jobnumber    %s
taskid       undefined
failed       %s
exit_status  %s
ru_wallclock 3s
"""
GONE = (1, "Following jobs do not exist: \n%s\n", "")


@pytest.mark.parametrize("job_id,answers,want", [
    ("2", [(["qstat", "-j", "2"], (0, QSTAT_J, "")), (["qstat", "-u", "*"], (0, QSTAT_U, ""))],
     {"state": "HELD", "active": True, "name": "probe", "stdout_path": "/w/probe-2.out",
      "stderr_path": "/w/probe-2.out", "comment": "modak=abc"}),
    ("3", [(["qstat", "-j", "3"], GONE), (["qacct", "-j", "3"], (0, QACCT % ("probe", "3", "0", "3"), ""))],
     {"state": "FAILED", "active": False, "exit_code": 3, "elapsed": 3}),
    ("4", [(["qstat", "-j", "4"], GONE),
           (["qacct", "-j", "4"], (0, QACCT % ("sleep", "4", "100 : assumedly after job", "137  (Killed)"), ""))],
     {"state": "CANCELLED", "exit_code": 137}),
    ("5", [(["qstat", "-j", "5"], GONE), (["qacct", "-j", "5"], (0, QACCT % ("ok", "5", "0", "0"), ""))],
     {"state": "COMPLETED", "exit_code": 0, "name": "ok"}),
], ids=["held", "failed", "cancelled", "completed"])
def test_status_from_recorded_answers(job_id, answers, want):
    runner = FakeRunner([(argv, (rc, out % job_id if "%s" in out else out, err))
                         for argv, (rc, out, err) in answers])
    status = gridengine.GridEngine(runner, chdir="/w").status(job_id)
    assert dict((key, getattr(status, key)) for key in want) == want


def test_find_active_reads_the_context(monkeypatch):
    monkeypatch.setattr(gridengine, "_user_name", lambda: "root")
    runner = FakeRunner([(["qstat", "-j", "probe"], (0, QSTAT_J, ""))])
    submitter = gridengine.GridEngine(runner)
    assert submitter.find_active("probe", "abc") == "2"
    assert submitter.find_active("probe", "other") is None


def test_an_unknown_job_is_a_clear_error():
    runner = FakeRunner([(["qstat", "-j", "9"], GONE), (["qacct", "-j", "9"], (1, "", "error: job id 9 not found\n"))])
    submitter = gridengine.GridEngine(runner)
    submitter.accounting_pause = 0
    with pytest.raises(SubmitError, match="Grid Engine knows no job 9"):
        submitter.status("9")


def test_check_mode_and_submission_through_the_job(tmp_path):
    script = tmp_path / "g.sge"
    script.write_text("#!/bin/bash\n#$ -N g\n#$ -cwd\nhostname\n")
    text = script.read_text()
    runner = FakeRunner([
        (["qstat", "-j", "g"], (1, "Following jobs do not exist: \ng\n", "")),
        (["qsub", "-terse", "-w", "v", str(script)], (0, "verification: found suitable queue(s)\n", "")),
        (["qsub", "-terse", "-ac", "modak=" + digest(text), str(script)], (0, "7\n", "")),
        (["qstat", "-j", "7"], (0, QSTAT_J.replace("job_number:                 2",
                                                   "job_number:                 7"), "")),
        (["qstat", "-u", "*"], (0, QSTAT_U.replace("      2 0.0", "      7 0.0"), "")),
    ])
    checked = run(Request(script=str(script), check_mode=True), runner)
    assert checked["msg"] == "verification: found suitable queue(s)" and checked["scheduler"] == "gridengine"
    result = run(Request(script=str(script)), runner)
    assert (result["job_id"], result["state"], result["job_name"]) == ("7", "HELD", "g")


def _found(qstat_text, name="probe", script=None):
    runner = FakeRunner([(["qstat", "-j", name], (0, qstat_text, ""))])
    return gridengine.GridEngine(runner, script=script).find_active(name, "abc")


def test_find_active_adopts_only_our_own_job(monkeypatch):
    """A job whose context holds our key is ours only with our user, our job name and our script."""
    monkeypatch.setattr(gridengine, "_user_name", lambda: "root")
    mine = QSTAT_J.replace("context:", "script_file:                /w/probe.sge\ncontext:")
    assert _found(mine, script="/w/probe.sge") == "2"
    assert _found(mine.replace("owner:                      root", "owner:                      mallory"),
                  script="/w/probe.sge") is None
    assert _found(mine, script="/w/other.sge") is None
    assert _found(mine.replace("job_name:                   probe", "job_name:                   probe2")) is None
    assert _found(QSTAT_J, script="/w/probe.sge") is None          # no script_file: cannot tell, not adopted


@pytest.mark.parametrize("script,extra_args", [
    ("#!/bin/bash\n#$ -ac modak=abc\nhostname\n", []),
    ("#!/bin/bash\n#$ -N x -ac a=1,modak=abc\nhostname\n", []),
    ("#!/bin/bash\n#$ -sc MODAK=abc\nhostname\n", []),
    ("#!/bin/bash\nhostname\n", ["-ac", "modak=abc"]),
    ("#!/bin/bash\nhostname\n", ["-dc", "modak"]),
])
def test_a_forged_key_is_refused(script, extra_args):
    with pytest.raises(SubmitError, match="reserved"):
        gridengine.GridEngine(FakeRunner([])).check(script, extra_args)


def test_other_contexts_pass():
    gridengine.GridEngine(FakeRunner([])).check("#!/bin/bash\n#$ -ac project=x\nhostname\n", ["-ac", "a=1"])


def test_an_ended_jobs_output_is_found_under_grid_engines_own_name(tmp_path):
    """qacct keeps no output path: a finished job's output is <name>.o<id> in the folder it was submitted from
    (the build job's log was lost: the role said 'its log ends:' with nothing after it)."""
    gone = (GONE[0], GONE[1] % "7", GONE[2])
    answers = [(["qstat", "-j", "7"], gone), (["qacct", "-j", "7"], (0, QACCT % ("modak-build", "7", "0", "1"), ""))]
    assert gridengine.GridEngine(FakeRunner(list(answers)), chdir=str(tmp_path)).status("7").stdout_path is None
    (tmp_path / "modak-build.o7").write_text("Error: building at STEP 2\n")
    status = gridengine.GridEngine(FakeRunner(list(answers)), chdir=str(tmp_path)).status("7")
    assert (status.state, status.stdout_path) == ("FAILED", str(tmp_path / "modak-build.o7"))


def test_an_active_job_without_o_writes_to_its_own_name_in_its_folder():
    text = QSTAT_J.replace("stdout_path_list:           NONE:NONE:probe-$JOB_ID.out\n", "").replace(
        "merge:                      y\n", "")
    runner = FakeRunner([(["qstat", "-j", "2"], (0, text, "")), (["qstat", "-u", "*"], (0, QSTAT_U, ""))])
    status = gridengine.GridEngine(runner, chdir="/elsewhere").status("2")
    assert (status.stdout_path, status.stderr_path) == ("/w/probe.o2", "/w/probe.e2")


def test_an_arrays_accounting_says_failed_when_one_task_failed():
    """qacct -j prints one record per task of an array: the last one's state answered for the whole array."""
    gone = (GONE[0], GONE[1] % "8", GONE[2])
    records = QACCT % ("modak-bench", "8", "0", "1") + QACCT % ("modak-bench", "8", "0", "0")
    status = gridengine.GridEngine(FakeRunner([(["qstat", "-j", "8"], gone), (["qacct", "-j", "8"], (0, records, ""))]),
                                   chdir="/w").status("8")
    assert (status.state, status.exit_code) == ("FAILED", 1)


def test_an_array_tasks_output_is_its_own_file(tmp_path):
    """An array task writes <name>.o<id>.<task>: the failed task's file is the one named."""
    gone = (GONE[0], GONE[1] % "9", GONE[2])
    records = (QACCT % ("modak-bench", "9", "0", "0")).replace("taskid       undefined", "taskid       1") + \
        (QACCT % ("modak-bench", "9", "0", "3")).replace("taskid       undefined", "taskid       2")
    (tmp_path / "modak-bench.o9.2").write_text("Traceback\n")
    status = gridengine.GridEngine(FakeRunner([(["qstat", "-j", "9"], gone), (["qacct", "-j", "9"], (0, records, ""))]),
                                   chdir=str(tmp_path)).status("9")
    assert (status.state, status.exit_code, status.stdout_path) == ("FAILED", 3, str(tmp_path / "modak-bench.o9.2"))
