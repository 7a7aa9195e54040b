"""DSL loading and validation: valid documents pass, every problem is named by its path."""

from __future__ import annotations

import json

import pytest
from helpers import EXAMPLES, ORIGINAL, ai_doc, load, with_

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, dsl_values
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid


def paths(doc):
    return [p.path for p in dsl.problems(doc)]


@pytest.mark.parametrize("path", EXAMPLES + ORIGINAL, ids=lambda p: p.rsplit("/", 1)[-1])
def test_examples_and_original_inputs_validate(path):
    doc = load(path)
    assert dsl.problems(doc) == []
    request = dsl.parse(doc)
    assert request.options.job_name == doc["job"]["job_options"]["job_name"]


def test_minimal_document_gets_defaults():
    request = dsl.parse({"job": {"application": {"executable": "./a.out"}}})
    assert request.options.job_name == "job"
    assert request.options.stdout is None  # the scheduler's own naming, unique per job
    assert request.app.argv == ("./a.out",)
    assert request.app.mpi_ranks == 1 and request.app.threads == 1
    assert request.target.scheduler == "local"
    assert request.opt is None
    assert any("job_scheduler_type" in note for note in request.notes)


def test_all_problems_reported_at_once_with_paths_values_and_hints():
    doc = {"job": {
        "job_options": {"job_name": "a b", "queu": "x", "wall_time_limit": "1:70:00",
                        "request_event_notification": "abe"},
        "application": {"executable": "./x", "mpi_ranks": 0, "arguments": "a 'b"},
        "optimisation": {"app_type": "ai_training", "opt_build": {"cpu_type": "x86", "acc_type": "nvidai"},
                         "app_type-ai_training": {"config": {"ai_framework": "tensorflow"},
                                                  "ai_framework-pytorch": {"version": "1"}}}}}
    found = {p.path: p for p in dsl.problems(doc)}
    assert set(found) == {
        "job.job_options.job_name", "job.job_options.queu", "job.application.mpi_ranks",
        "job.optimisation.opt_build.acc_type", "job.job_options.wall_time_limit",
        "job.job_options.email_address", "job.application.arguments",
        "job.optimisation.app_type-ai_training.ai_framework-pytorch",
    }
    assert found["job.job_options.queu"].hint == "did you mean 'queue'?"
    assert "did you mean 'nvidia'?" in found["job.optimisation.opt_build.acc_type"].hint
    assert found["job.application.mpi_ranks"].value == 0
    assert found["job.job_options.job_name"].value == "a b"
    with pytest.raises(DslInvalid) as err:
        dsl.parse(doc)
    assert len(err.value.problems) == 8
    assert "job.job_options.queu: unknown key 'queu'" in str(err.value)


@pytest.mark.parametrize("path,value,expected", [
    ("job.job_options.job_name", "x\n#SBATCH --wrap=rm", "job.job_options.job_name"),
    ("job.job_options.job_name", "../x/pwn", "job.job_options.job_name"),
    ("job.job_options.queue", "q;rm -rf ~", "job.job_options.queue"),
    ("job.job_options.account", "a b", "job.job_options.account"),
    ("job.job_options.standard_output_file", "out\n#SBATCH -x", "job.job_options.standard_output_file"),
    ("job.job_options.standard_output_file", "/etc/passwd", "job.job_options.standard_output_file"),
    ("job.job_options.standard_output_file", "../../etc/passwd", "job.job_options.standard_output_file"),
    ("job.job_options.standard_output_file", "logs/../../x", "job.job_options.standard_output_file"),
    ("job.job_options.standard_error_file", "/root/.bashrc", "job.job_options.standard_error_file"),
    ("job.job_options.email_address", "not-an-email", "job.job_options.email_address"),
    ("job.job_options.job_array", "1-10;x", "job.job_options.job_array"),
    ("job.job_options.job_dependency", "afterok:1 && rm", "job.job_options.job_dependency"),
    ("job.job_options.memory_limit", "lots", "job.job_options.memory_limit"),
    ("job.job_options.wall_time_limit", "1:00:00 ", "job.job_options.wall_time_limit"),
    ("job.job_options.wall_time_limit", 0, "job.job_options.wall_time_limit"),
    ("job.job_options.extra_directives", ["--x=1\n#SBATCH --y"], "job.job_options.extra_directives[0]"),
    ("job.application.executable", "./a\nrm -rf /", "job.application.executable"),
    ("job.application.executable", "./a\u2028b", "job.application.executable"),
    ("job.application.arguments", ["ok", "bad\x00"], "job.application.arguments[1]"),
    ("job.application.container_runtime", "docker://x;rm", "job.application.container_runtime"),
    ("job.application.environment", {"1BAD": "x"}, "job.application.environment"),
    ("job.application.environment", {"OK": "a\nb"}, "job.application.environment.OK"),
    ("job.application.bind_paths", ["relative:/x"], "job.application.bind_paths[0]"),
    ("job.application.working_directory", "/tmp/$(id)", "job.application.working_directory"),
    ("job.application.modules", ["gcc; rm"], "job.application.modules[0]"),
    ("job.application.launcher", "srun2", "job.application.launcher"),
    ("job.target.job_scheduler_type", "slrum", "job.target.job_scheduler_type"),
    ("job.optimisation.app_type", "big_data", "job.optimisation.app_type"),
])
def test_bad_values_are_rejected_at_their_path(path, value, expected):
    doc = with_(ai_doc("tensorflow", "2.1"), path, value)
    assert expected in paths(doc)


@pytest.mark.parametrize("enum_path,bad,good", [
    ("job.target.job_scheduler_type", "slrum", "slurm"),
    ("job.optimisation.app_type-ai_training.config.ai_framework", "pytroch", "pytorch"),
])
def test_enum_hint_names_the_nearest_value(enum_path, bad, good):
    doc = with_(ai_doc("tensorflow", "2.1"), enum_path, bad)
    hints = [p.hint for p in dsl.problems(doc) if p.path == enum_path]
    assert hints and "did you mean '%s'?" % good in hints[0]


def test_semantic_rules():
    base = ai_doc("tensorflow", "2.1")
    # the section must match app_type
    doc = with_(base, "job.optimisation.app_type", "hpc")
    assert {"job.optimisation.app_type-hpc", "job.optimisation.app_type-ai_training"} <= set(paths(doc))
    # stderr needed when not combining; email needed for notifications (the original's no-op validators)
    doc = with_(base, "job.job_options.combine_stdout_stderr", False)
    assert "job.job_options.standard_error_file" in paths(doc)
    doc = with_(base, "job.job_options.request_event_notification", "END")
    assert "job.job_options.email_address" in paths(doc)
    doc = with_(doc, "job.job_options.email_address", "me@example.org")
    assert paths(doc) == []
    # queue and partition name one thing
    doc = with_(with_(base, "job.job_options.queue", "a"), "job.job_options.partition", "b")
    assert paths(doc) == ["job.job_options.partition"]
    # an arm ISA on an x86 target
    doc = with_(base, "job.optimisation.opt_build.cpu_isa", "armv8.2-a")
    assert paths(doc) == ["job.optimisation.opt_build.cpu_isa"]
    doc = with_(base, "job.optimisation.opt_build.cpu_microarch", "neoverse_v1")
    assert paths(doc) == ["job.optimisation.opt_build.cpu_microarch"]


def test_superset_fields_of_the_original_are_accepted():
    doc = ai_doc("pytorch", "2.5", glow=True, compile=True)
    doc["job"]["job_options"].update({
        "account": "p1", "qos": "high", "memory_limit": "4G", "job_array": "0-9%2",
        "job_dependency": ["afterok:12", "afterany:13"], "node_exclusive": True, "core_count": 4,
        "core_count_per_process": 2, "defer_job": "2026-12-01T10:00", "architecture_constraint": "skylake"})
    doc["job"]["optimisation"]["opt_build"]["acc_type"] = "none"
    request = dsl.parse(doc)
    assert request.options.mem_mb == 4096
    assert request.options.dependency == ("afterok:12", "afterany:13")
    assert request.opt.accelerator == "none"
    assert request.opt.compilers == ("glow", "inductor")
    for framework in ("keras", "mxnet", "jax"):
        assert dsl.problems(ai_doc(framework, "1")) == []
    for model in ("openmp", "openacc", "opencl"):
        hpc = {"job": {"application": {"executable": "./a"}, "optimisation": {
            "app_type": "hpc", "opt_build": {"cpu_type": "x86"},
            "app_type-hpc": {"config": {"parallelisation": model}}}}}
        assert dsl.problems(hpc) == []
    assert dsl.problems(with_(ai_doc("tensorflow"), "job.optimisation.opt_build.acc_type", "")) == []


@pytest.mark.parametrize("value,seconds", [
    (3600, 3600), ("3600", 3600), ("1:00:00", 3600), ("30:00:00", 108000), ("10:30", 630),
    ("2-00:00:00", 172800), ("P1DT2H", 93600), ("PT45M", 2700), ("0:0:59", 59),
    # sbatch(1)'s --time forms with days: days-hours, days-hours:minutes, days-hours:minutes:seconds
    ("1-2", 93600), ("1-02", 93600), ("1-02:30", 95400), ("1-02:30:15", 95415), ("0-1", 3600),
    ("90:00", 5400),   # minutes:seconds, minutes past 60 as sbatch takes them
])
def test_walltime_forms(value, seconds):
    assert dsl_values.walltime_seconds(value) == seconds


@pytest.mark.parametrize("value", ["1:70:00", "1-02:60", "10:60", "1-", "-1", "1-2-3", "1:2:3:4", "1.5", "",
                                   "\u0661-02", "P1Y"])
def test_walltime_refuses(value):
    with pytest.raises(ValueError):
        dsl_values.walltime_seconds(value)


@pytest.mark.parametrize("value,mb", [(4096, 4096), ("4G", 4096), ("512M", 512), ("1.5G", 1536),
                                      ("1T", 1048576), ("2048k", 2), ("4GB", 4096), ("4Gi", 4096)])
def test_memory_forms(value, mb):
    assert dsl_values.memory_mb(value) == mb


@pytest.mark.parametrize("text,events", [("abe", ("FAIL", "BEGIN", "END")), ("END,FAIL", ("END", "FAIL")),
                                         ("all", ("ALL",)), ("n", ("NONE",))])
def test_mail_events(text, events):
    assert dsl_values.mail_events(text) == events


def test_yaml_and_json_are_loaded_safely(tmp_path):
    yml = tmp_path / "a.yaml"
    yml.write_text("job:\n  application:\n    executable: ./a\n")
    assert dsl.load_file(str(yml)) == {"job": {"application": {"executable": "./a"}}}
    js = tmp_path / "a.json"
    js.write_text(json.dumps({"job": {"application": {}}}))
    assert dsl.load_file(str(js)) == {"job": {"application": {}}}
    with pytest.raises(DslInvalid, match="not valid JSON"):
        dsl.loads('{"job": ', "json")
    with pytest.raises(DslInvalid, match="YAML"):
        dsl.loads("job: [", "yaml")
    with pytest.raises(DslInvalid, match="not valid YAML"):
        dsl.loads("!!python/object/apply:os.system ['id']", "yaml")


def test_hostile_documents_are_refused():
    bomb = "a: &a ['x','x']\nb: &b [*a,*a]\nc: &c [*b,*b]\n"
    with pytest.raises(DslInvalid, match="aliases"):
        dsl.loads(bomb, "yaml")
    with pytest.raises(DslInvalid, match="nests deeper"):
        dsl.loads("[" * 200 + "]" * 200, "json")
    with pytest.raises(DslInvalid, match="nests deeper"):
        dsl.loads("a:\n" + "".join("  " * i + " - \n" for i in range(1, 60)), "yaml")
    with pytest.raises(DslInvalid, match="larger than"):
        dsl.loads("x" * (dsl.MAX_BYTES + 1))
    with pytest.raises(DslInvalid, match="UTF-8"):
        dsl.loads(b"\xff\xfe{", "json")


def test_non_mapping_document():
    assert paths([1, 2]) == [""]
    assert paths({"jbo": {}})[0] in ("job", "jbo")
    assert "did you mean 'job'?" in [p.hint for p in dsl.problems({"jbo": {}}) if p.path == "jbo"]


@pytest.mark.parametrize("application,path", [
    ({"executable": "' '"}, "job.application.executable"),
    ({"executable": "''", "arguments": "x"}, "job.application.executable"),
    ({"arguments": ["", "x"]}, "job.application.arguments"),
])
def test_an_empty_program_word_is_rejected_at_its_field(application, path):
    found = [p for p in dsl.problems({"job": {"application": application}}) if "empty word" in p.message]
    assert [p.path for p in found] == [path]
