"""No template evaluation of user input: through ansible-playbook, '{{ ... }}' in a DSL stays literal when the
document comes from dsl_file (never templated by Ansible), from a lookup, or from vars marked !unsafe."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest
from robustkit import ROOT, record

ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
HOSTILE = "{{ lookup('pipe', 'touch %s') }}"

PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars_files: [vars.yml]
  tasks:
    - name: Optimise
      sodalite.modak.optimise:
%s
        output_dir: "%s"
      register: modak_result
"""


def document(canary):
    return {"job": {"job_options": {"job_name": "tpl"},
                    "application": {"executable": "./a", "arguments": [HOSTILE % canary, "{{ 7*7 }}", "{% raw %}x"],
                                    "environment": {"T": "{{ 6*7 }}"},
                                    "build": {"src": "https://example.org/s.tar.gz",
                                              "build_command": "make {{ lookup('env', 'HOME') }} -j{{BUILD_PARALLELISM}}"}},
                    "target": {"job_scheduler_type": "slurm"}}}


@pytest.mark.parametrize("how", ["dsl_file", "lookup_file", "unsafe_vars"])
def test_templates_in_the_dsl_stay_literal(how, tmp_path):
    canary = str(tmp_path / "canary")
    doc = document(canary)
    dsl_path = tmp_path / "job.json"
    dsl_path.write_text(json.dumps(doc))
    out = tmp_path / "out"
    if how == "dsl_file":
        args, variables = '        dsl_file: "%s"' % dsl_path, "{}\n"
    elif how == "lookup_file":
        args = "        dsl: \"{{ lookup('ansible.builtin.file', '%s') | from_json }}\"" % dsl_path
        variables = "{}\n"
    else:
        args = '        dsl: "{{ job_doc }}"'
        arguments = "".join("\n          - !unsafe %s" % json.dumps(a) for a in doc["job"]["application"]["arguments"])
        variables = ("job_doc:\n  job:\n    job_options: {job_name: tpl}\n    target: {job_scheduler_type: slurm}\n"
                     "    application:\n      executable: ./a\n      arguments:%s\n"
                     "      environment: {T: !unsafe '{{ 6*7 }}'}\n"
                     "      build:\n        src: https://example.org/s.tar.gz\n        build_command: !unsafe %s\n"
                     % (arguments, json.dumps(doc["job"]["application"]["build"]["build_command"])))
    (tmp_path / "vars.yml").write_text(variables)
    (tmp_path / "play.yml").write_text(PLAY % (args, out))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"))
    proc = subprocess.run([ANSIBLE_PLAYBOOK, str(tmp_path / "play.yml")], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    script = (out / "tpl.sbatch").read_text() if (out / "tpl.sbatch").exists() else ""
    lines = script.rstrip("\n").split("\n")
    build = [shlex.split(line) for line in lines if line.startswith("bash -c ")]
    literal = bool(script) and shlex.split(lines[-1]) == ["./a"] + doc["job"]["application"]["arguments"] \
        and build == [["bash", "-c", "make {{ lookup('env', 'HOME') }} -j1"]] and "export T='{{ 6*7 }}'" in lines
    escaped = os.path.exists(canary)
    record("templates", attempts=1, evaluated=int(escaped or not literal))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not escaped and literal, script
    # an evaluated template would leave 49 or 42 as a word of its own (the temporary path may hold '142')
    assert not re.search(r"(?<![\w/.-])(49|42)(?![\w/.-])", script), script
