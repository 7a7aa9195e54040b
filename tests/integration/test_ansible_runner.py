"""The collection as AWX runs it: ansible-runner on a private data directory laid out as AWX lays it out
(project/, inventory/, env/), the collection installed from its built tarball by project/collections/requirements.yml
before the job, as AWX installs a project's collections, and ansible_runner.run called from another directory.
ansible-runner starts ansible-playbook in project/ and passes its caller's $PWD on: relative paths resolve in the
project all the same (docs/ee.md, "Relative paths"). The DSL beside the playbooks is found from a playbook that
imports the collection's and from one in a subfolder; the job script and the fetched job output land in project/;
the artifacts hold modak's output and no secret value.

No shared service: the optimise playbook only writes a Slurm script, and the role's job runs on the local scheduler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import ansible_runner
import pytest
import yaml
from galaxy_build import BIN
from galaxy_build import env as _env


SECRET = "runner-secret-8c41f0"
TRAIN = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "examples", "pytorch-cpu-slurm.yaml")
HELLO = {"job": {"job_options": {"job_name": "hello-runner"},
                 "application": {"executable": "/bin/echo", "arguments": "hello from the project",
                                 "secrets": {"API_TOKEN": {"value": SECRET}}},
                 "target": {"job_scheduler_type": "local"}}}
SITE = [{"name": "Optimise the project's DSL", "ansible.builtin.import_playbook": "sodalite.modak.optimise",
         "vars": {"dsl_file": "dsl/train.yaml"}}]
DEPLOY = [{"name": "Run the project's job", "hosts": "all", "gather_facts": False,
           "roles": [{"role": "sodalite.modak.optimised_job", "optimised_job_dsl_file": "dsl/hello.yaml",
                      "optimised_job_poll_interval": 1}]}]


def _dump(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        if isinstance(data, str):
            handle.write(data)
        else:
            yaml.safe_dump(data, handle, sort_keys=False)


def lay_out(private, tarball):
    """A private data directory as AWX writes it for a job (``private``), with the project's collections installed
    into project/collections from ``tarball``."""
    project = private / "project"
    with open(TRAIN, encoding="utf-8") as handle:
        train = yaml.safe_load(handle)
    train["job"]["application"]["secrets"] = {"API_TOKEN": {"value": SECRET}}
    _dump(str(project / "dsl" / "train.yaml"), train)
    _dump(str(project / "dsl" / "hello.yaml"), HELLO)
    _dump(str(project / "site.yml"), SITE)
    _dump(str(project / "playbooks" / "deploy.yml"), DEPLOY)
    _dump(str(project / "collections" / "requirements.yml"), {"collections": [{"name": tarball, "type": "file"}]})
    _dump(str(private / "inventory" / "hosts"),
          "localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    _dump(str(private / "env" / "envvars"),
          {"ANSIBLE_COLLECTIONS_PATH": str(project / "collections"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "False", "PATH": BIN + os.pathsep + os.environ.get("PATH", "")})
    _dump(str(private / "env" / "extravars"), {"optimised_job_work_dir": str(private / "work")})
    install = _env(project, str(project / "collections"))
    install.pop("PYTHONPATH", None)         # the suite's copy of the collection is not the job's
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-r",
                    str(project / "collections" / "requirements.yml"), "-p", str(project / "collections")],
                   cwd=str(project), env=install, check=True, capture_output=True, timeout=300)
    assert (project / "collections" / "ansible_collections" / "sodalite" / "modak" / "MANIFEST.json").is_file()
    return private


@pytest.fixture(scope="module")
def awx(installed, tmp_path_factory):
    """The private data directory of the tests' jobs (lay_out), with the collection's tarball built once per run."""
    return lay_out(tmp_path_factory.mktemp("awx") / "private", installed[0])


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """The caller's directory: ansible_runner.run is called from here, with $PWD naming it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.delenv("ANSIBLE_CONFIG", raising=False)           # the checkout's ansible.cfg is not the job's
    monkeypatch.delenv("ANSIBLE_COLLECTIONS_PATH", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)                # the suite's, relative to the checkout
    return tmp_path


def _never_cancelled():
    """ansible_runner.run's cancel callback, as AWX passes its own: without one, run() replaces the process's
    SIGTERM and SIGINT handlers for good (ansible_runner.utils.signal_handler), and the pytest worker's later forked
    children would ignore SIGTERM."""
    return False


def _run(private, playbook, ident):
    done = ansible_runner.run(private_data_dir=str(private), playbook=playbook, ident=ident, quiet=True,
                              timeout=600, cancel_callback=_never_cancelled)
    artifacts = private / "artifacts" / ident
    assert done.status == "successful" and done.rc == 0, (artifacts / "stdout").read_text()[-4000:]
    return done, artifacts


def _artifact_text(artifacts):
    """Every file ansible-runner wrote for the job (stdout, events, command, status)."""
    texts = []
    for top, _dirs, names in os.walk(str(artifacts)):
        for name in names:
            with open(os.path.join(top, name), encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read())
    return "\n".join(texts)


def _results(done, task):
    """The results of the task named ``task`` in the job's events."""
    return [event["event_data"]["res"] for event in done.events
            if event.get("event") == "runner_on_ok" and event["event_data"].get("task") == task]


def test_a_playbook_importing_the_collections_finds_the_dsl_and_writes_into_the_project(awx, elsewhere):
    done, artifacts = _run(awx, "site.yml", "site")
    project = awx / "project"
    script = project / "out" / "mnist-train.sbatch"
    assert script.is_file() and "#SBATCH" in script.read_text()
    ran = {event["event_data"].get("task_path", "").split(":")[0] for event in done.events
           if event.get("event") == "runner_on_ok"}
    assert ran == {str(project / "collections" / "ansible_collections" / "sodalite" / "modak" / "playbooks"
                       / "optimise.yml")}                               # the tarball's copy, installed for the job
    shown = _results(done, "Show the chosen image, the reasons and the script")
    assert shown and shown[0]["msg"]["job_script"] == str(script)
    assert shown[0]["msg"]["explanation"]                              # modak's output is in the events
    text = _artifact_text(artifacts)
    assert str(script) in text and SECRET not in text
    assert os.listdir(str(elsewhere)) == []                            # nothing written where runner was called


def test_a_playbook_in_a_subfolder_runs_the_job_and_fetches_its_output_into_the_project(awx, elsewhere):
    done, artifacts = _run(awx, "playbooks/deploy.yml", "deploy")
    project = awx / "project"
    assert (awx / "work" / "hello-runner.sh").is_file()
    fetched = list((project / "out" / "results" / "localhost").iterdir())
    assert any("hello from the project" in p.read_text() for p in fetched)
    submitted = _results(done, "Submit the job")
    assert submitted and submitted[0]["state"] == "COMPLETED"
    text = _artifact_text(artifacts)
    assert "hello-runner" in text and SECRET not in text
    assert not (project / "playbooks" / "out").exists() and os.listdir(str(elsewhere)) == []
    assert json.loads((artifacts / "rc").read_text()) == 0


def test_a_missing_dsl_names_the_project_among_the_places_looked_at(awx, elsewhere):
    _dump(str(awx / "project" / "missing.yml"), [dict(SITE[0], vars={"dsl_file": "dsl/absent.yaml"})])
    done = ansible_runner.run(private_data_dir=str(awx), playbook="missing.yml", ident="missing", quiet=True,
                              timeout=600, cancel_callback=_never_cancelled)
    assert done.status == "failed"
    assert str(awx / "project" / "dsl" / "absent.yaml") in done.stdout.read()
