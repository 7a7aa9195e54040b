"""Second adversarial review of the DSL: non-text and bash-owned variable names, raw directives, values that
crashed without a path (impossible dates, duplicate keys, NaN, huge integers), the command word."""

from __future__ import annotations

import copy
import subprocess

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, dsl_rules, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

BASE = {"job": {"job_options": {"job_name": "t"}, "application": {"executable": "./app"},
                "target": {"job_scheduler_type": "slurm"}}}


def doc_with(section, key, value, scheduler="slurm"):
    out = copy.deepcopy(BASE)
    out["job"]["target"]["job_scheduler_type"] = scheduler
    out["job"].setdefault(section, {})[key] = value
    return out


def rejected(doc):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(doc)
    return {p.path: p for p in err.value.problems}


# ---------------------------------------------------------------- environment keys

def test_binary_yaml_key_in_environment_is_rejected_with_its_path():
    # !!binary of b"'$(touch /tmp/modak-canary)'": this became  export b"'$(touch ...)'"=1  in the script
    text = ("job:\n  application:\n    executable: ./app\n    environment:\n"
            "      !!binary JyQodG91Y2ggL3RtcC9tb2Rhay1jYW5hcnkpJw==: 1\n")
    found = rejected(dsl.loads(text, "yaml"))
    [(path, problem)] = found.items()
    assert path.startswith("job.application.environment[") and "touch" in path
    assert "must be text" in problem.message


@pytest.mark.parametrize("key", [0, 7, 1.5, True, None, b"X", (1, 2)], ids=repr)
def test_non_text_environment_keys_are_rejected(key):
    found = rejected(doc_with("application", "environment", {key: "zero", "OK": "1"}))
    [(path, problem)] = found.items()
    assert path.startswith("job.application.environment") and repr(key) in path
    assert "must be text" in problem.message


def test_integer_yaml_keys_are_rejected():
    found = rejected(dsl.loads("job:\n  application:\n    executable: ./a\n    environment: {0: zero, 1: one}\n",
                               "yaml"))
    assert set(found) == {"job.application.environment.0", "job.application.environment.1"}


@pytest.mark.parametrize("name", sorted(dsl_rules.BASH_READONLY))
def test_bash_read_only_variables_are_rejected_and_really_are_read_only(name):
    found = rejected(doc_with("application", "environment", {name: "1"}))
    assert "read-only" in found["job.application.environment.%s" % name].message
    # the reason, read from bash itself: exporting it stops a 'set -e' script
    proc = subprocess.run(["/bin/bash", "-ec", "export %s=1; echo reached" % name], capture_output=True, text=True,
                          check=False)
    assert proc.returncode != 0 and "reached" not in proc.stdout


@pytest.mark.parametrize("name", ["RANDOM", "SECONDS", "GROUPS", "BASH_ARGV0", "LINENO"])
def test_variables_bash_sets_itself_are_rejected(name):
    found = rejected(doc_with("application", "environment", {name: "1"}))
    assert "bash sets it" in found["job.application.environment.%s" % name].message


def test_ordinary_environment_still_renders():
    result = pipeline.optimise(doc_with("application", "environment", {"OMP_PROC_BIND": "close", "N": 3}), None)
    assert "export OMP_PROC_BIND=close" in result.script.text and "export N=3" in result.script.text


# ---------------------------------------------------------------- extra directives

REFUSED = [
    ("slurm", "--output=/etc/passwd"), ("slurm", "--error=/etc/passwd"), ("slurm", "--chdir=/etc"),
    ("slurm", "-D /etc"), ("slurm", "-o /etc/passwd"), ("slurm", "-e /root/x"), ("slurm", "--input=/etc/shadow"),
    ("slurm", "--out=/etc/passwd"), ("slurm", "--export-file=/etc/shadow"), ("slurm", "--wrap=id"),
    ("slurm", "--uid=0"), ("slurm", "--gid=0"), ("slurm", "--nodefile=/etc/hosts"), ("slurm", "--container=/x"),
    ("slurm", "--job-name=other"), ("slurm", "-J other"), ("slurm", "--partition=p"), ("slurm", "-ofoo"),
    ("slurm", "--comment=modak:0f3c"), ("slurm", "--comment modak:0f3c"), ("slurm", "--comment=MODAK:x"),
    ("slurm", "--bbf=/etc/x"), ("slurm", "--get-user-env"),
    ("pbspro", "-o /etc/passwd"), ("pbspro", "-e /etc/passwd"), ("pbspro", "-S /tmp/evil"), ("pbspro", "-u root"),
    ("pbspro", "-W stagein=x@h:/etc/shadow"), ("pbspro", "-W stageout=/etc/x@h:/y"), ("pbspro", "-W x=y"),
    ("pbspro", "-C X"), ("pbspro", "-N other"), ("pbspro", "-j oe"), ("pbspro", "-lselect=1"),
    ("pbspro", "--comment=modak:x"),
    ("torque", "-d /etc"), ("torque", "-w /etc"), ("torque", "-D /"), ("torque", "-P root"), ("torque", "-o x"),
    ("torque", "-e /x"), ("torque", "-W stagein=/x@h:/y"), ("torque", "-c dir=/etc"), ("torque", "-T prologue"),
    ("local", "--comment=modak:0f3c"),
    # hardening, round five, item 11: a raw resource a typed line writes came after that line and won
    ("gridengine", "-l h_rt=99:00:00"), ("gridengine", "-l h_vmem=1T"), ("gridengine", "-l arch=lx-amd64,h_rt=1"),
    ("gridengine", "-l gpu=8"), ("torque", "-l pmem=100gb"),
]
ACCEPTED = [
    ("slurm", "--reservation=r1"), ("slurm", "--comment=hello"), ("slurm", "--hold"), ("slurm", "-H"),
    ("slurm", "--gpus-per-task=1"), ("slurm", "--signal=B:USR1@60"), ("slurm", "--nice=10"),
    ("slurm", "--exclude=n[01-02]"), ("slurm", "-x n01"), ("slurm", "--licenses=matlab:1"),
    ("pbspro", "-l place=pack"), ("pbspro", "-W umask=022"), ("pbspro", "-P proj"), ("pbspro", "-r n"),
    ("pbspro", "-h"), ("torque", "-l feature=x"), ("torque", "-W umask=022"), ("torque", "-f"),
    ("local", "--output=/etc/passwd"),     # a local run writes no directive (ignored, with a warning)
    ("gridengine", "-l arch=lx-amd64"), ("gridengine", "-l tmpfree=1G"),
]


@pytest.mark.parametrize("scheduler,directive", REFUSED, ids=str)
def test_extra_directives_that_name_files_or_bypass_typed_fields_are_refused(scheduler, directive):
    found = rejected(doc_with("job_options", "extra_directives", ["--nice=1", directive], scheduler))
    problem = found["job.job_options.extra_directives[1]"]
    assert problem.value == directive and problem.hint


@pytest.mark.parametrize("scheduler,directive", ACCEPTED, ids=str)
def test_documented_extra_directives_are_written(scheduler, directive):
    result = pipeline.optimise(doc_with("job_options", "extra_directives", [directive], scheduler), None)
    if scheduler != "local":
        assert result.script.directives[-1].endswith(" " + directive)


def test_typed_field_is_named_in_the_hint():
    found = rejected(doc_with("job_options", "extra_directives", ["--output=/etc/passwd"]))
    assert found["job.job_options.extra_directives[0]"].hint == "use job_options.standard_output_file"


# ---------------------------------------------------------------- values that crashed without a path

def test_impossible_yaml_date_is_rejected_with_its_path():
    text = "job:\n  application: {executable: ./a}\n  job_options:\n    defer_job: 2026-02-30\n"
    found = rejected(dsl.loads(text, "yaml"))
    assert list(found) == ["job.job_options.defer_job"]
    assert found["job.job_options.defer_job"].value == "2026-02-30"


@pytest.mark.parametrize("value", ["2026-02-30", "2026-13-01", "2026-01-01T24:00", "2025-02-29T10:00:00"])
def test_impossible_dates_in_json_are_rejected(value):
    assert list(rejected(doc_with("job_options", "defer_job", value))) == ["job.job_options.defer_job"]


def test_real_unquoted_yaml_date_is_read_as_text():
    text = "job:\n  application: {executable: ./a}\n  job_options: {defer_job: 2026-03-01}\n" \
           "  target: {job_scheduler_type: slurm}\n"
    result = pipeline.optimise(dsl.loads(text, "yaml"), None)
    assert "#SBATCH --begin=2026-03-01" in result.script.directives


def test_duplicate_yaml_keys_are_rejected_with_their_paths():
    text = ("job:\n  application:\n    executable: ./a\n    environment:\n      A: 1\n      A: 2\n"
            "  job_options: {job_name: x, job_name: y}\n")
    with pytest.raises(DslInvalid) as err:
        dsl.loads(text, "yaml")
    assert sorted(p.path for p in err.value.problems) == ["job.application.environment.A",
                                                          "job.job_options.job_name"]


def test_duplicate_json_keys_are_rejected_with_their_paths():
    text = '{"job": {"application": {"executable": "./a", "executable": "./b"}, "target": {}}}'
    with pytest.raises(DslInvalid) as err:
        dsl.loads(text, "json")
    assert [p.path for p in err.value.problems] == ["job.application.executable"]


@pytest.mark.parametrize("text,fmt,path", [
    ("job:\n  application: {executable: ./a, minimal_efficiency: .nan}\n", "yaml",
     "job.application.minimal_efficiency"),
    ("job:\n  application: {executable: ./a, environment: {X: .inf}}\n", "yaml", "job.application.environment.X"),
    ('{"job": {"application": {"executable": "./a", "minimal_efficiency": NaN}}}', "json",
     "job.application.minimal_efficiency"),
    ('{"job": {"application": {"executable": "./a", "environment": {"X": -Infinity}}}}', "json",
     "job.application.environment.X"),
    ('{"job": {"application": {"executable": "./a", "minimal_efficiency": 1e999}}}', "json",
     "job.application.minimal_efficiency"),
])
def test_non_finite_numbers_are_rejected_with_their_path(text, fmt, path):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(dsl.loads(text, fmt))
    assert any(p.path == path and "finite" in p.message for p in err.value.problems), err.value.problems


def test_integer_too_long_to_read_is_rejected_with_its_path():
    text = "job:\n  application:\n    executable: ./a\n    mpi_ranks: %s\n" % ("9" * 5000)
    with pytest.raises(DslInvalid) as err:
        dsl.loads(text, "yaml")
    assert [p.path for p in err.value.problems] == ["job.application.mpi_ranks"]


# ---------------------------------------------------------------- the command word

# (a word starting with '-' is refused: after a launcher it would be the launcher's option; ./--steps runs)
WORDS = ["done", "if", "then", "fi", "time", "function", "A=1", "PATH+=x", "A[0]=1", "!", "{", "[[", "coproc", "while"]


@pytest.mark.parametrize("word", WORDS)
def test_first_word_is_run_as_a_program(word, tmp_path):
    """A program literally named 'done' or 'A=1' is what runs; bash does not read the word as syntax."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / word
    stub.write_text('#!/bin/bash\nprintf "%s|%s\\n" "$(basename "$0")" "$*" >>"$MODAK_CALLS"\n')
    stub.chmod(0o755)
    doc = {"job": {"application": {"executable": word, "arguments": ["x y", "z"]},
                   "job_options": {"job_name": "w"}, "target": {"job_scheduler_type": "local"}}}
    result = pipeline.optimise(doc, None)
    script = tmp_path / "w.sh"
    script.write_text(result.script.text)
    calls = tmp_path / "calls"
    env = {"PATH": "%s:/usr/bin:/bin" % bin_dir, "MODAK_CALLS": str(calls), "HOME": str(tmp_path)}
    proc = subprocess.run(["/bin/bash", str(script)], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=30, check=False)
    output = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert proc.returncode == 0, (result.script.text, proc.stderr, output)
    assert calls.read_text() == "%s|x y z\n" % word, result.script.text
    subprocess.run(["/bin/bash", "-n", str(script)], check=True)


@pytest.mark.parametrize("executable,arguments,path", [
    ("%1", None, "job.application.executable"), ("%vi -x", None, "job.application.executable"),
    (None, ["%%", "a"], "job.application.arguments")])
def test_a_program_word_bash_reads_as_a_job_is_refused(executable, arguments, path):
    app = dict((k, v) for k, v in (("executable", executable), ("arguments", arguments)) if v is not None)
    found = rejected({"job": {"application": app}})
    assert "job" in found[path].message and found[path].hint.startswith("name the program by its path")
    # the reason, read from bash: even quoted, and even after 'command', '%1' is 'fg %1'
    proc = subprocess.run(["/bin/bash", "-c", "command -- '%1'"], capture_output=True, text=True, check=False)
    assert "fg" in proc.stderr


@pytest.mark.parametrize("image", ["-Bx.sif", "--bind=/:/x.sif", "-x.sif", "-.sif"])
def test_a_sif_path_that_reads_as_an_option_is_refused(image):
    """'apptainer exec -Bx.sif ./app' would take the image as an option: a .sif path starts with a letter, digit,
    '_', '.', '/' or '+'."""
    from ansible_collections.sodalite.modak.plugins.module_utils import dsl as dsl_module
    from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid as Invalid
    doc = {"job": {"application": {"executable": "./app", "container_runtime": image},
                   "target": {"job_scheduler_type": "slurm", "container_engine": "apptainer"}}}
    with pytest.raises(Invalid) as info:
        dsl_module.parse(doc)
    assert [p.path for p in info.value.problems] == ["job.application.container_runtime"]


@pytest.mark.parametrize("program", [".", "source", ". ./env.sh", "source ./env.sh"])
def test_bashs_own_source_command_as_the_program_is_refused_by_path(program):
    """'.' or 'source' as the program word would read a file into the job's own shell (the schema fuzzer wrote a
    launch line of '.', which shellcheck reads as a source of nothing): refused, with the setup field to use."""
    found = rejected(doc_with("application", "executable", program))
    assert "bash's own command" in found["job.application.executable"].message


def test_a_program_named_with_a_dot_in_its_path_is_still_accepted():
    dsl.parse(doc_with("application", "executable", "./.hidden/run.sh"))


@pytest.mark.parametrize("program", ["--container-image=evil/x", "--output=/tmp/x ./app", "--rdzv-endpoint=evil:1",
                                     "--mca plm_rsh_agent sh", "-x LD_PRELOAD=/tmp/x.so ./app"])
def test_a_program_word_that_a_launcher_would_read_as_its_option_is_refused(program):
    """Hardening, round five, item 10: the program's first word came right after srun, torchrun or mpirun, which
    took a leading '-' as their own option (past launch_options' allow-list)."""
    found = rejected(doc_with("application", "executable", program))
    assert "starts with '-'" in found["job.application.executable"].message
