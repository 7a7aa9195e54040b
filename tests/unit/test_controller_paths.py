"""Relative controller paths, one rule (plugins/plugin_utils/controller_paths.py): a file to read is looked up as
template looks up its src (the role's files/ and folder, the playbook's folder), then in the folders of the
playbooks given to ansible-playbook, then in the project directory, ansible-playbook's working directory (never
$PWD: ansible-runner starts ansible-playbook in the project and passes its caller's $PWD on); a place to write is
under the project directory. The action plugins and the project_path lookup follow it, and no playbook or role of
the collection reads $PWD."""

from __future__ import annotations

import glob
import os

import pytest
import yaml
from ansible import constants as C
from ansible import context
from ansible.errors import AnsibleFileNotFound
from ansible.parsing.dataloader import DataLoader
from ansible.utils.context_objects import CLIArgs
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.action import container_recipe as recipe_action
from ansible_collections.sodalite.modak.plugins.action import optimise as optimise_action
from ansible_collections.sodalite.modak.plugins.lookup import project_path
from ansible_collections.sodalite.modak.plugins.plugin_utils import controller_paths

DSL = {"job": {"application": {"executable": "/bin/echo"}, "target": {"job_scheduler_type": "local"}}}


class Task(object):
    """The part of an Ansible task an action plugin asks about its paths."""

    def __init__(self, search_path):
        self.search_path = [str(p) for p in search_path]

    def get_search_path(self):
        return list(self.search_path)


def _loader(basedir):
    loader = DataLoader()
    loader.set_basedir(str(basedir))
    return loader


def _action(cls, basedir, search_path=None):
    return cls(Task(search_path or [basedir]), None, None, _loader(basedir), None)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An AWX project (a playbook in a subfolder, the DSL under dsl/), ansible-playbook started in it by a caller
    whose $PWD is elsewhere, as ansible-runner does."""
    root = tmp_path / "project"
    _write(root / "dsl" / "train.yaml", yaml.safe_dump(DSL))
    _write(root / "site.yml", "- ansible.builtin.import_playbook: sodalite.modak.optimise\n")
    _write(root / "playbooks" / "site.yml", "[]\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("PWD", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(context, "CLIARGS", CLIArgs({}))
    return root


def test_a_playbook_in_a_subfolder_reads_the_dsl_of_the_project(project):
    """ansible-playbook playbooks/site.yml with dsl_file: dsl/train.yaml: the action found the file in the working
    directory, then handed the relative path to the loader, which looked for it in playbooks/ ('Could not find or
    access'). The path it reads is now the absolute one it found."""
    action = _action(optimise_action.ActionModule, project / "playbooks")
    assert action._read("dsl/train.yaml", lambda real: open(real).read()) == yaml.safe_dump(DSL)
    recipe = _action(recipe_action.ActionModule, project / "playbooks")
    assert recipe._load_file("dsl/train.yaml")["job"]["target"] == DSL["job"]["target"]


def test_a_playbook_importing_the_collections_reads_the_dsl_beside_itself(project, tmp_path, monkeypatch):
    """import_playbook: sodalite.modak.optimise in project/site.yml: the play's folder is the collection's, and
    ansible-playbook may be started elsewhere; the folder of the playbook it was given is looked in."""
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setattr(context, "CLIARGS", CLIArgs({"args": (str(project / "site.yml"),)}))
    action = _action(optimise_action.ActionModule, os.path.join(ROOT, "playbooks"))
    assert action._read("dsl/train.yaml", lambda real: real) == str(project / "dsl" / "train.yaml")


def test_the_role_and_the_playbook_come_first_as_for_template(project):
    role = project / "roles" / "job"
    _write(role / "tasks" / "main.yml", "[]\n")
    _write(role / "files" / "dsl" / "train.yaml", "role\n")
    _write(project / "playbooks" / "dsl" / "train.yaml", "playbook\n")
    loader = _loader(project / "playbooks")
    search = [str(role), str(role / "tasks")]
    assert controller_paths.to_read(loader, search, "dsl/train.yaml") == str(role / "files" / "dsl" / "train.yaml")
    assert controller_paths.to_read(loader, [str(project / "playbooks")], "dsl/train.yaml") == str(
        project / "playbooks" / "dsl" / "train.yaml")


def test_a_missing_file_names_every_place_looked_at(project):
    with pytest.raises(AnsibleFileNotFound) as caught:
        controller_paths.to_read(_loader(project / "playbooks"), [str(project / "playbooks")], "dsl/gone.yaml")
    message = str(caught.value)
    assert "dsl/gone.yaml" in message and str(project / "dsl" / "gone.yaml") in message
    assert str(project / "playbooks" / "dsl" / "gone.yaml") in message
    assert message.count(str(project / "playbooks" / "dsl" / "gone.yaml") + "\n") <= 1      # each place once
    with pytest.raises(AnsibleFileNotFound):          # not the folder it would be looked up in
        controller_paths.to_read(_loader(project / "playbooks"), [str(project / "playbooks")], "")


def test_absolute_and_home_paths_are_taken_as_given(project):
    loader = _loader(project)
    assert controller_paths.to_read(loader, [], "/nowhere/x.yaml") == "/nowhere/x.yaml"
    assert controller_paths.to_read(loader, [], "~/x.yaml") == os.path.expanduser("~/x.yaml")


def test_places_to_write_are_under_the_working_directory_not_pwd(project):
    assert controller_paths.to_write("out") == str(project / "out")
    assert controller_paths.to_write("out/../results") == str(project / "results")
    assert controller_paths.to_write("~/out") == os.path.expanduser("~/out")
    assert controller_paths.to_write("/srv/out") == "/srv/out"


def _lookup():
    C.config.initialize_plugin_configuration_definitions(
        "lookup", "sodalite.modak.project_path", yaml.safe_load(project_path.DOCUMENTATION)["options"])
    plugin = project_path.LookupModule(loader=_loader(os.path.join(ROOT, "playbooks")))
    plugin._load_name = "sodalite.modak.project_path"
    return plugin


def test_the_lookup_gives_the_playbooks_and_roles_the_same_rule(project):
    plugin = _lookup()
    assert plugin.run(["out", "/srv/x"], variables={}) == [str(project / "out"), "/srv/x"]
    found = plugin.run(["dsl/train.yaml"], variables={"ansible_search_path": [str(project / "playbooks")]},
                       existing=True)
    assert found == [str(project / "dsl" / "train.yaml")]
    with pytest.raises(AnsibleFileNotFound):
        plugin.run(["dsl/gone.yaml"], variables={}, existing=True)


def test_no_playbook_or_role_resolves_a_path_from_pwd():
    """$PWD is the caller's under ansible-runner (and AWX): the playbooks and roles wrote the job script and the
    fetched output there, outside the project."""
    found = []
    for path in glob.glob(os.path.join(ROOT, "playbooks", "**", "*.yml"), recursive=True) + glob.glob(
            os.path.join(ROOT, "roles", "**", "*.yml"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            if "'PWD'" in handle.read():
                found.append(os.path.relpath(path, ROOT))
    assert found == []
