"""The original MODAK's documents and forms go through, and the script body runs them as meant.

Inputs are the original's own text (MODAK/test/input/mpi_solver.json, EXAMPLE.md, test_MODAK.py, the
requests of SODALITE's blueprint builder); scripts are run with bash where behaviour is the point.
"""

from __future__ import annotations

import copy
import os
import subprocess

import pytest
from helpers import with_

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.render import clone_dir
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names

# MODAK/test/input/mpi_solver.json (Code_Aster), as published
ASTER_EXECUTABLE = "${ASTER_ROOT}/14.4/bin/aster "
ASTER_ARGUMENTS = ("${ASTER_ROOT}/14.4/lib/aster/Execution/E_SUPERV.py \\\n-commandes fort.1 --num_job=1432 "
                   "--mode=interactif \\\n--rep_outils=${ASTER_ROOT}/outils \\\n--rep_mat=${ASTER_ROOT}/14.4/share/"
                   "aster/materiau \\\n--rep_dex=${ASTER_ROOT}/14.4/share/aster/datg \\\n--numthreads=1 --suivi_batch "
                   "--memjeveux=8192.0 --tpmax=3600.0")
BASE = {"job": {"job_options": {"job_name": "t", "standard_output_file": "t.out"},
                "application": {"executable": "./app"}, "target": {"job_scheduler_type": "local"}}}


def app_doc(**application):
    doc = copy.deepcopy(BASE)
    doc["job"]["application"].update(application)
    return doc


def printed_words(command_line, env):
    """The argv a command line of the job script really passes (bash runs it with printf)."""
    proc = subprocess.run(["bash", "-c", "printf '%s\\0' " + command_line], capture_output=True, text=True,
                          env=env, check=True)
    return proc.stdout.split("\0")[:-1]


def run_line(text):
    return [line for line in text.splitlines() if line and not line.startswith(("#", "set ", "exec ", "export "))][-1]


# ---------------------------------------------------------------- defect 3: backslash-newline continuations

def test_code_aster_arguments_with_continuations_are_accepted(catalog):
    request = dsl.parse(app_doc(executable=ASTER_EXECUTABLE, arguments=ASTER_ARGUMENTS))
    words = shell.split_words(ASTER_EXECUTABLE + " " + ASTER_ARGUMENTS)
    assert words[1] == "${ASTER_ROOT}/14.4/lib/aster/Execution/E_SUPERV.py" and words[2] == "-commandes"
    assert not any("\n" in w or "\\" in w for w in words)
    assert len(request.app.argv) == len(words) == 13


@pytest.mark.parametrize("text,words", [
    ("a \\\nb", ["a", "b"]),            # continuation between words
    ("ab\\\ncd", ["abcd"]),             # inside a word: joined, as a shell does
    ('"a\\\nb"', ["ab"]),               # inside double quotes too
    ("'a\\\nb'", ["a\\\nb"]),           # single quotes keep it
    ("a\\ b", ["a b"]),
])
def test_continuations_are_read_as_a_shell_reads_them(text, words):
    assert shell.split_words(text) == words
    assert printed_words(shell.command(shell.split_command(text)), {}) == list(words)


def test_a_bare_newline_is_still_refused():
    with pytest.raises(DslInvalid) as err:
        dsl.parse(app_doc(arguments="a\nb"))
    assert [p.path for p in err.value.problems] == ["job.application.arguments"]


# ---------------------------------------------------------------- defect 4: container_runtime forms

@pytest.mark.parametrize("given,uri", [
    ("ethcscs/openmpi:3.1.3", "docker://ethcscs/openmpi:3.1.3"),
    ("some-container", "docker://some-container")])
def test_bare_image_names_are_read_as_docker_with_a_warning(given, uri, catalog):
    result = pipeline.optimise(app_doc(container_runtime=given), catalog)
    assert result.choice.uri == uri
    assert 'IMAGE="$MODAK_IMAGE_DIR/%s"' % names.cache_name(uri, ".sif") in result.script.text
    assert any("read as '%s'" % uri in w for w in result.warnings)


def test_empty_container_runtime_means_none(catalog):
    result = pipeline.optimise(app_doc(container_runtime=""), catalog)
    assert result.choice.uri is None and "apptainer" not in result.script.text
    assert any("container_runtime ''" in n for n in result.explanation)


def test_blueprint_builder_request_validates(catalog):
    """The shape iac-blueprint-builder posts: a bare container name and string values from TOSCA."""
    doc = {"job": {"application": {"executable": "./run.sh", "container_runtime": "some-container"},
                   "job_options": {"job_name": "bp", "core_count": 40, "node_count": 1, "combine_stdout_stderr": "true",
                                   "copy_environment": "false"},
                   "target": {"job_scheduler_type": "torque", "name": "hlrs-testbed"}}}
    result = pipeline.optimise(doc, catalog)
    assert "#PBS -l nodes=1:ppn=40" in result.script.directives and "#PBS -V" not in result.script.directives


# ---------------------------------------------------------------- defect 5: $VAR expansion, nothing else

def test_code_aster_variables_expand_at_run_time(catalog, tmp_path):
    result = pipeline.optimise(app_doc(executable=ASTER_EXECUTABLE, arguments=ASTER_ARGUMENTS), catalog)
    line = run_line(result.script.text)
    assert line.startswith('"${ASTER_ROOT}"/14.4/bin/aster "${ASTER_ROOT}"/14.4/lib/aster/Execution/E_SUPERV.py')
    words = printed_words(line, {"ASTER_ROOT": "/opt/aster", "PATH": os.environ["PATH"]})
    assert words[0] == "/opt/aster/14.4/bin/aster"
    assert "--rep_outils=/opt/aster/outils" in words and "--memjeveux=8192.0" in words


@pytest.mark.parametrize("executable", ["${APP_HOME}/bin/run x", "./a]", "${D}/", "run{", "./a = b", "./a == +=c"])
def test_run_lines_with_variables_or_odd_names_pass_shellcheck(executable, catalog, tmp_path):
    from test_render import lint
    lint(pipeline.optimise(app_doc(executable=executable), catalog).script.text, tmp_path)
    lint(pipeline.optimise(app_doc(executable=executable, **{"post-execution": "true"}), catalog).script.text,
         tmp_path)


def test_only_plain_variable_references_expand(tmp_path):
    canary = tmp_path / "canary"
    text = ("$HOME ${HOME}/x '$HOME' \\$HOME \"$HOME\" $(touch %s) `touch %s` $1 $$ ${HOME:-x} $ ~ * a$HOME"
            % (canary, canary))
    env = {"HOME": "/home/u", "PATH": os.environ["PATH"]}
    words = printed_words(shell.command(shell.split_command(text)), env)
    assert words == ["/home/u", "/home/u/x", "$HOME", "$HOME", "/home/u", "$(touch", "%s)" % canary,
                     "`touch", "%s`" % canary, "$1", "$$", "${HOME:-x}", "$", "~", "*", "a/home/u"]
    assert not canary.exists()


def test_autotuning_runs_expand_the_same_variables(monkeypatch):
    from ansible_collections.sodalite.modak.plugins.module_utils.perf import tune
    monkeypatch.setenv("ASTER_ROOT", "/opt/aster")
    argv = tune.application_argv(shell.split_command("${ASTER_ROOT}/bin/aster '$X' $(id)"), {}, {})
    assert argv == ["/opt/aster/bin/aster", "$X", "$(id)"]


def test_list_arguments_are_exact_words(catalog):
    result = pipeline.optimise(app_doc(arguments=["$HOME", "${X}"]), catalog)
    assert printed_words(run_line(result.script.text), {"HOME": "/h", "X": "x"}) == ["./app", "$HOME", "${X}"]


# ---------------------------------------------------------------- defect 6: git's own clone directory

@pytest.mark.parametrize("src,name", [("https://github.com/org/solver.git", "solver"),
                                      ("https://github.com/org/solver.git/", "solver"),
                                      ("git://host/path/code_aster", "code_aster"),
                                      ("ssh://git@host:22/team/repo.git", "repo"),
                                      ("https://host/x/repo/.git", "repo")])
def test_clone_directory_is_gits_own(src, name):
    assert clone_dir(src) == name


def test_clone_directory_matches_what_git_does(tmp_path):
    origin = tmp_path / "remote" / "solver.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin)], cwd=str(tmp_path), check=True, capture_output=True)
    assert (tmp_path / clone_dir("https://example.org/remote/solver.git")).is_dir()


def test_build_command_can_cd_into_the_clone(catalog):
    doc = app_doc(build={"src": "https://github.com/org/solver.git", "build_command": "cd solver && make"})
    text = pipeline.optimise(doc, catalog).script.text
    assert "if [ ! -d solver ]; then git clone --depth 1 -- https://github.com/org/solver.git solver; fi" in text


# ---------------------------------------------------------------- defect 9: the original's documented fields

def test_pre_and_post_execution_run_as_given_around_the_run(catalog, tmp_path):
    doc = app_doc(executable="sh -c 'echo run $MODE >> log; exit 3'",
                  **{"pre-execution": "export MODE=fast\necho \"pre $MODE\" > log  # a comment",
                     "post-execution": ["echo post >> log", "echo 'it''s done' >> log"]})
    doc["job"]["application"]["environment"] = {"MODE": "slow"}
    script = pipeline.optimise(doc, catalog).script.text
    (tmp_path / "job.sh").write_text(script)
    proc = subprocess.run(["bash", "job.sh"], cwd=str(tmp_path), capture_output=True, text=True, check=False)
    assert proc.returncode == 3     # the run's exit status, although post-execution ran after it
    assert (tmp_path / "log").read_text().splitlines() == ["pre fast", "run fast", "post", "its done"]


def test_pre_execution_cannot_break_the_script(catalog, tmp_path):
    """User shell with an open quote fails by itself; it never swallows the lines that follow it."""
    doc = app_doc(executable="touch ran", **{"pre-execution": "echo 'open"})
    doc["job"]["application"]["pre-execution"] = "true 'open"
    text = pipeline.optimise(doc, catalog).script.text
    subprocess.run(["bash", "-n", "-c", text], check=True)
    (tmp_path / "job.sh").write_text(text)
    proc = subprocess.run(["bash", "job.sh"], cwd=str(tmp_path), capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and not (tmp_path / "ran").exists()


def test_eval_lines_are_never_templates(catalog):
    doc = app_doc(**{"pre-execution": "echo {{ 7*7 }} {% if x %}"})
    text = pipeline.optimise(doc, catalog).script.text
    assert "{{ 7*7 }} {% if x %}" in text and "49" not in text


def test_queue_type_names_the_scheduler(catalog):
    doc = with_(app_doc(), "job.target", {"name": "hlrs_testbed", "queue_type": "slurm"})
    result = pipeline.optimise(doc, catalog)
    assert result.script.scheduler == "slurm"
    assert any("queue_type" in n for n in result.explanation)
    doc = with_(doc, "job.target.job_scheduler_type", "torque")
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc, catalog)
    assert [p.path for p in err.value.problems] == ["job.target.queue_type"]


def test_string_booleans_of_the_original_tests_are_read_as_booleans(catalog):
    """test_MODAK.py's job_options: combine_stdout_stderr 'true', copy_environment 'false'."""
    doc = {"job": {"job_options": {"job_name": "test_job", "node_count": 4, "process_count_per_node": 2,
                                   "standard_output_file": "test.out", "standard_error_file": "test.err",
                                   "combine_stdout_stderr": "true", "copy_environment": "false"},
                   "application": {"executable": "./foo"}, "target": {"job_scheduler_type": "slurm"}}}
    result = pipeline.optimise(doc, catalog)
    lines = result.script.directives
    assert "#SBATCH --export=ALL" not in lines and not any("--error" in line for line in lines)
    assert any("'false' is read as the boolean false" in n for n in result.explanation)
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(with_(doc, "job.job_options.copy_environment", "no"), catalog)
    assert [p.path for p in err.value.problems] == ["job.job_options.copy_environment"]


@pytest.mark.parametrize("command", ["make -j{{BUILD_PARALLELISM}}", "make -j{{ BUILD_PARALLELISM }}",
                                     "make -j{{  BUILD_PARALLELISM}}"])
def test_build_parallelism_with_spaces_is_substituted(command, catalog):
    doc = app_doc(build={"src": "https://example.org/a.tar.gz", "build_command": command, "build_parallelism": 6})
    text = pipeline.optimise(doc, catalog).script.text
    assert "bash -c 'make -j6'" in text and "BUILD_PARALLELISM" not in text


# ---------------------------------------------------------------- defect 16: per-target setup, tuner warning

def test_target_modules_and_setup_come_first(catalog):
    doc = app_doc(modules=["app/1.0"])
    doc["job"]["target"].update({"name": "egi", "modules": ["mpi/openmpi-x86_64"], "setup": "ulimit -s unlimited"})
    body = list(pipeline.optimise(doc, catalog).script.body)
    target_load = body.index("module load mpi/openmpi-x86_64")
    assert target_load < body.index("eval 'ulimit -s unlimited'") < body.index("module load app/1.0")


def test_target_modules_are_validated(catalog):
    doc = with_(app_doc(), "job.target.modules", ["mpi; rm -rf ~"])
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc, catalog)
    assert [p.path for p in err.value.problems] == ["job.target.modules[0]"]


def test_a_tuner_modak_does_not_run_is_a_warning(catalog):
    doc = app_doc()
    doc["job"]["optimisation"] = {"enable_autotuning": True, "app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                                  "autotuning": {"tuner": "cresta", "input": "dsl text"},
                                  "app_type-hpc": {"config": {"parallelisation": "mpi"}}}
    result = pipeline.optimise(doc, catalog)
    assert any("tuner 'cresta', which modak does not run" in w for w in result.warnings)
