"""A DSL read from a file: every problem names file:line:column (its value's, or its parent key's when the value
is missing), a syntax error too, and a value YAML 1.1 read as a boolean or a number where a text is wanted is told
to be quoted as written. The problems keep their DSL paths."""

from __future__ import annotations

import io
import json

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils import cli, dsl
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

AI = ("job:\n"
      "  job_options:\n"
      "    job_name: %s\n"
      "  application:\n"
      "    executable: %s\n"
      "  optimisation:\n"
      "    app_type: ai_training\n"
      "    opt_build: {cpu_type: x86}\n"
      "    app_type-ai_training:\n"
      "      config: {ai_framework: tensorflow}\n"
      "      ai_framework-tensorflow: {version: %s}\n")


def problems_of(tmp_path, text, name="dsl.yaml"):
    path = tmp_path / name
    path.write_text(text)
    try:
        return str(path), dsl.problems(dsl.load_file(str(path)))
    except DslInvalid as exc:
        return str(path), exc.problems


def by_path(problems):
    return dict((p.path, p) for p in problems)


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path):
    path, found = problems_of(tmp_path, "job:\n  application: [1,\n  b: c\n")
    assert len(found) == 1
    assert found[0].location == "%s:4:1" % path
    assert "<unicode string>" not in str(found[0]) and str(found[0]).startswith(path + ":4:1: ")
    assert "expected ',' or ']'" in found[0].message and "2:16" in found[0].message   # where the list began


def test_a_json_syntax_error_names_the_file_line_and_column(tmp_path):
    path, found = problems_of(tmp_path, '{"job": {"application":\n {"executable": "a",}}}', "dsl.json")
    assert [p.location for p in found] == ["%s:2:21" % path]


def test_every_schema_and_rule_problem_carries_its_location_and_keeps_its_path(tmp_path):
    text = ("job:\n  job_options:\n    job_name: t\n    queu: x\n    wall_time_limit: \"1:70:00\"\n"
            "  application:\n    executable: ./a\n  target:\n    job_scheduler_type: slurmm\n")
    path, found = problems_of(tmp_path, text)
    where = dict((p.path, p.location) for p in found)
    assert where == {"job.job_options.queu": "%s:4:11" % path,                   # unknown key: its value
                     "job.job_options.wall_time_limit": "%s:5:22" % path,         # a rule's problem
                     "job.target.job_scheduler_type": "%s:9:25" % path}           # the schema's enum
    plain = dsl.problems(dsl.loads(text))                                         # the same, not from a file
    assert [p.path for p in plain] == [p.path for p in found]
    assert all(p.location is None for p in plain)


def test_a_missing_value_is_placed_at_its_parent_key(tmp_path):
    path, found = problems_of(tmp_path, "job:\n  job_options:\n    job_name: x\n  optimisation:\n"
                                        "    app_type: ai_training\n")
    where = by_path(found)
    assert where["job.application"].location == "%s:1:1" % path                 # under job:, at job's key
    assert where["job.optimisation.app_type-ai_training"].location == "%s:4:3" % path


@pytest.mark.parametrize("written,got,hint", [
    ("no", False, 'quote the value as written: "no" (YAML 1.1 reads no as the boolean false)'),
    ("yes", True, 'quote the value as written: "yes" (YAML 1.1 reads yes as the boolean true)'),
    ("off", False, 'quote the value as written: "off" (YAML 1.1 reads off as the boolean false)'),
    ("0755", 493, 'quote the value as written: "0755" (YAML 1.1 reads 0755 as the number 493)'),
])
def test_yaml_11_readings_of_a_text_field_are_told_to_be_quoted(tmp_path, written, got, hint):
    path, found = problems_of(tmp_path, AI % (written, written, '"2.1"'))
    for field, line in (("job.job_options.job_name", 3), ("job.application.executable", 5)):
        problem = by_path(found)[field]
        assert problem.value == got and problem.hint == hint
        assert problem.location == "%s:%d:%d" % (path, line, 15 if line == 3 else 17)


def test_a_version_read_as_a_float_is_told_to_be_quoted(tmp_path):
    _path, found = problems_of(tmp_path, AI % ("t", "./a", "2.10"))
    problem = by_path(found)["job.optimisation.app_type-ai_training.ai_framework-tensorflow.version"]
    assert problem.value == 2.1
    assert problem.hint == 'quote the value as written: "2.10" (YAML 1.1 reads 2.10 as the number 2.1)'
    _path, found = problems_of(tmp_path, AI % ('"no"', "'0755'", '"2.10"'))
    assert found == []                                                          # quoted, all is well


def test_json_values_carry_their_location_without_a_yaml_hint(tmp_path):
    path, found = problems_of(tmp_path, '{"job": {"application": {"executable": 1}}}', "dsl.json")
    assert [(p.path, p.location, p.hint) for p in found] == [("job.application.executable", path + ":1:40", None)]


def test_a_duplicate_key_is_placed_at_its_second_occurrence(tmp_path):
    path, found = problems_of(tmp_path, "job:\n  application: {executable: a}\n  application: {executable: b}\n")
    assert [(p.path, p.location) for p in found] == [("job.application", "%s:3:16" % path)]


def test_the_command_prints_the_location_first_and_json_carries_it(tmp_path):
    path = tmp_path / "dsl.yaml"
    path.write_text(AI % ("no", "./a", '"2.1"'))
    out = io.StringIO()
    assert cli.main(["validate", str(path)], stdout=out, stderr=io.StringIO()) == 1
    assert "\n  %s:3:15: job.job_options.job_name: must be of type string" % path in out.getvalue()
    out = io.StringIO()
    cli.main(["validate", "--format", "json", str(path)], stdout=out, stderr=io.StringIO())
    problem = json.loads(out.getvalue())["files"][0]["problems"][0]
    assert problem["location"] == "%s:3:15" % path and problem["path"] == "job.job_options.job_name"


def test_a_loaded_document_is_still_a_plain_mapping(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("job:\n  application:\n    executable: ./a\n")
    doc = dsl.load_file(str(path))
    assert doc == {"job": {"application": {"executable": "./a"}}} and isinstance(doc, dict)
    assert json.dumps(doc) == '{"job": {"application": {"executable": "./a"}}}'


def test_a_problem_found_when_the_script_is_written_is_placed_too(tmp_path):
    """PBS Pro cannot express qos: the scheduler refuses it while writing the script, at its file:line:column."""
    path = tmp_path / "dsl.yaml"
    path.write_text("job:\n  job_options:\n    job_name: t\n    node_count: 1\n    qos: high\n"
                    "  application:\n    executable: ./a\n  target:\n    job_scheduler_type: pbspro\n")
    out = io.StringIO()
    assert cli.main(["optimise", "-o", str(tmp_path / "out"), str(path)], stdout=out, stderr=io.StringIO()) == 1
    assert "\n  %s:5:10: job.job_options.qos: " % path in out.getvalue()
