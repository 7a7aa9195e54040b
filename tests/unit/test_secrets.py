"""Secrets: application.secrets read on the node (env, file) never enter the script; a secret value never reaches
a result, a report or a validation message; job scripts and the directories modak makes are private whatever the
umask."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess

import pytest
from helpers import with_

from ansible_collections.sodalite.modak.plugins.module_utils import cli, dsl, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import optimise as task

TOKEN = "hf_s3cr3t-t0ken-value"


def local_doc(**app):
    """A bare run on the local scheduler that prints its TOKEN."""
    application = {"executable": "bash", "arguments": ["-c", 'printf "%s" "$TOKEN"'], "container_runtime": ""}
    application.update(app)
    return {"job": {"job_options": {"job_name": "tok"}, "application": application,
                    "target": {"job_scheduler_type": "local"}}}


def result_of(doc, catalog):
    return pipeline.optimise(doc, catalog)


def run_script(result, tmp_path, env=None):
    script = tmp_path / result.script.filename
    script.write_text(result.script.text)
    return subprocess.run(["bash", str(script)], cwd=str(tmp_path), capture_output=True, text=True, timeout=20,
                          env=dict(os.environ, **(env or {})), check=False)


def test_a_secret_read_from_the_nodes_environment_never_enters_the_script(tmp_path, catalog):
    result = result_of(local_doc(secrets={"TOKEN": {"env": "SITE_TOKEN"}}), catalog)
    assert TOKEN not in result.script.text and "SITE_TOKEN" in result.script.text
    done = run_script(result, tmp_path, {"SITE_TOKEN": TOKEN})
    assert done.returncode == 0 and done.stdout.endswith(TOKEN), done.stderr
    missing = run_script(result, tmp_path)
    assert missing.returncode != 0 and TOKEN not in missing.stdout    # unset: the job stops before the program


def test_a_secret_read_from_a_file_never_enters_the_script(tmp_path, catalog):
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    secret.chmod(0o600)
    result = result_of(local_doc(secrets={"TOKEN": {"file": str(secret)}}), catalog)
    assert TOKEN not in result.script.text
    done = run_script(result, tmp_path)
    assert done.returncode == 0 and done.stdout.endswith(TOKEN), done.stderr
    secret.unlink()
    assert run_script(result, tmp_path).returncode != 0


def test_a_secret_value_is_masked_in_the_tasks_result_and_its_diff(catalog):
    result = result_of(local_doc(secrets={"TOKEN": {"value": TOKEN}}), catalog)
    assert TOKEN in result.script.text            # the private script holds it: the job needs it
    params = {"build_lookup_timeout": 0.1, "build_base_image": None}
    diff = {"before": "", "after": result.script.text}
    out = task.outcome(params, result, "/w/tok.sh", True, diff)
    assert TOKEN not in json.dumps(out)
    assert out["settings"]["env"]["TOKEN"] == "********" and "********" in out["job_script_content"]
    assert task.secret_values(result) == [TOKEN]


def test_the_json_report_never_shows_a_secret_and_the_script_and_directory_are_private(tmp_path):
    doc = local_doc(secrets={"TOKEN": {"value": TOKEN}}, environment={"PLAIN": "1"})
    path = tmp_path / "job.yaml"
    path.write_text(json.dumps(doc))
    out, old = io.StringIO(), os.umask(0o022)
    try:
        status = cli.main(["optimise", str(path), "-o", str(tmp_path / "jobs"), "--format", "json"],
                          stdout=out, stderr=io.StringIO())
    finally:
        os.umask(old)
    assert status == 0 and TOKEN not in out.getvalue()
    assert stat.S_IMODE(os.stat(str(tmp_path / "jobs")).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(str(tmp_path / "jobs" / "tok.sh")).st_mode) == 0o700


def test_an_environment_value_goes_into_a_private_script_whatever_the_umask(tmp_path):
    """The review's case: a token in application.environment went into a 0755 script in a 0755 directory."""
    path = tmp_path / "job.yaml"
    path.write_text(json.dumps(local_doc(environment={"TOKEN": TOKEN})))
    old = os.umask(0)
    try:
        assert cli.main(["optimise", str(path), "-o", str(tmp_path / "jobs")], stdout=io.StringIO(),
                        stderr=io.StringIO()) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(str(tmp_path / "jobs")).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(str(tmp_path / "jobs" / "tok.sh")).st_mode) == 0o700


@pytest.mark.parametrize("form", [{"value": TOKEN + "\n"}, {"value": TOKEN, "env": "X"}, {"env": "1BAD"},
                                  {"file": "relative/path"}, {}])
def test_a_bad_secret_is_refused_by_its_path_without_its_value(form):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(local_doc(secrets={"TOKEN": form}))
    assert all(p.path.startswith("job.application.secrets.TOKEN") for p in err.value.problems)
    assert TOKEN not in json.dumps([p.as_dict() for p in err.value.problems])


def test_a_secret_is_set_once():
    with pytest.raises(DslInvalid) as err:
        dsl.parse(local_doc(secrets={"TOKEN": {"env": "X"}}, environment={"TOKEN": "y"}))
    assert [p.path for p in err.value.problems] == ["job.application.secrets.TOKEN"]


def test_a_charliecloud_job_reads_a_secret_into_its_private_environment_file(catalog):
    doc = with_(local_doc(secrets={"TOKEN": {"env": "SITE_TOKEN"}}), "job.application.container_runtime",
                "docker://busybox:1.36")
    doc = with_(doc, "job.target.container_engine", "charliecloud")
    text = result_of(doc, catalog).script.text
    assert TOKEN not in text and "TOKEN" in text and 'MODAK_ENV_FILE' in text


def run_module(args, capsys, monkeypatch):
    """The optimise module's main() as Ansible runs it on a host (its arguments on stdin's place); its result."""
    from ansible.module_utils import basic                  # pylint: disable=import-outside-toplevel
    from ansible.module_utils.common.text.converters import to_bytes    # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.modules import optimise    # pylint: disable=import-outside-toplevel
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        optimise.main()
    return capsys.readouterr().out


@pytest.mark.parametrize("valid", [True, False])
def test_the_modules_whole_result_masks_a_secret_value_its_invocation_too(tmp_path, capsys, monkeypatch, valid):
    doc = local_doc(secrets={"TOKEN": {"value": TOKEN}})
    if not valid:
        doc["job"]["application"]["mpi_ranks"] = 0
    out = run_module({"dsl": doc, "output_dir": str(tmp_path / "jobs"), "_ansible_diff": True}, capsys, monkeypatch)
    result = json.loads(out)
    assert TOKEN not in out and bool(result.get("failed")) is not valid
    assert "invocation" in result


@pytest.mark.parametrize("folder", ["roles/optimised_job/tasks", "roles/container_build/tasks",
                                    "tosca/library/modak/playbooks"])
def test_the_roles_and_operations_write_job_scripts_and_their_directories_private(folder):
    """Every mode these tasks set (job, staging and build job scripts, work and job directories, the TOSCA
    operation's DSL document) is 0700 or 0600; only the build role's catalog, which holds no value of a job, is
    0644."""
    import glob                                               # pylint: disable=import-outside-toplevel
    import yaml                                               # pylint: disable=import-outside-toplevel
    from helpers import ROOT                                  # pylint: disable=import-outside-toplevel

    def modes(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "mode":
                    yield value
                else:
                    yield from modes(value)
        elif isinstance(node, list):
            for item in node:
                yield from modes(item)

    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, folder, "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            found.extend((os.path.basename(path), mode) for mode in modes(yaml.safe_load(handle)))
    assert found and all(mode in ("0700", "0600") or (path, mode) == ("catalog.yml", "0644")
                         for path, mode in found), found


QUOTED = "ab'cd-s3cr3t"      # the script writes it 'ab'"'"'cd-s3cr3t': the value itself is not in the text


def test_a_secret_with_a_quote_is_masked_in_every_form_the_script_writes(catalog):
    result = result_of(local_doc(secrets={"TOKEN": {"value": QUOTED}}), catalog)
    assert QUOTED not in result.script.text and "cd-s3cr3t" in result.script.text
    params = {"build_lookup_timeout": 0.1, "build_base_image": None}
    out = task.outcome(params, result, "/w/tok.sh", True, {"before": "", "after": result.script.text})
    assert "s3cr3t" not in json.dumps(out)


def test_the_printed_report_and_the_merged_document_mask_a_secret(tmp_path):
    """modak optimise -o - --format json carries the script; validate --show the document: both masked."""
    path = tmp_path / "job.yaml"
    path.write_text(json.dumps(local_doc(secrets={"TOKEN": {"value": TOKEN}})))
    for argv in (["optimise", str(path), "-o", "-", "--format", "json"], ["validate", "--show", str(path)],
                 ["validate", "--show", str(path), "--format", "json"]):
        out = io.StringIO()
        assert cli.main(argv, stdout=out, stderr=io.StringIO()) == 0, argv
        assert TOKEN not in out.getvalue() and "********" in out.getvalue(), argv


def test_the_host_logs_the_placement_of_a_script_without_its_secret(monkeypatch, tmp_path):
    """output_file's call, as AnsibleModule logs it on the host (syslog, the journal): the secret values the action
    plugin gives (secret_values, no_log) are masked in the script's content too."""
    from ansible.module_utils import basic                  # pylint: disable=import-outside-toplevel
    from ansible.module_utils.common.text.converters import to_bytes    # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.modules import output_file    # pylint: disable=import-outside-toplevel
    logged = []
    monkeypatch.setattr(basic.AnsibleModule, "log", lambda self, msg, log_args=None: logged.append(msg))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    quoted = "export TOKEN='ab'\"'\"'cd-s3cr3t'\n"
    args = {"output_dir": str(tmp_path), "name": "tok.sh", "content": quoted, "mode": "0700",
            "secret_values": ["ab'cd-s3cr3t", "'ab'\"'\"'cd-s3cr3t'", "cd-s3cr3t"], "_ansible_no_log": False}
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
    with pytest.raises(SystemExit):
        output_file.main()
    assert logged and "Invoked with" in logged[0] and "s3cr3t" not in " ".join(logged)
    assert output_file.ARGUMENT_SPEC["secret_values"]["no_log"] is True
    assert task.ARGUMENT_SPEC["secret_values"]["no_log"] is True


def test_the_action_gives_the_module_the_secret_values_to_mask():
    from ansible_collections.sodalite.modak.plugins.plugin_utils.remote_files import RemoteDir  # pylint: disable=import-outside-toplevel
    calls = []

    class Action(object):
        def _execute_module(self, module_name, task_vars, module_args):
            calls.append(module_args)
            return {"path": "/w/tok.sh", "changed": True}

    RemoteDir(Action(), {}, "/w").write("tok.sh", "x", 0o700, ["s3cr3t"])
    assert calls[0]["secret_values"] == ["s3cr3t"]
