"""async_wait: a real ansible-playbook starts a slow command with async/poll 0 writing a log, then waits for it.

The same task waits for image builds in the container_build role (tests/integration/containers covers that run).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from helpers import ROOT

LINE = re.compile(r"^localhost: slow step (RUNNING|FINISHED|FAILED), waited (\d+):(\d\d):(\d\d)(?:: (.*))?$")


def run_wait(tmp_path, steps, rc=0, timeout=60):
    log = tmp_path / "work.log"
    body = 'for i in $(seq %d); do echo "STEP $i/%d"; sleep 1; done; exit %d' % (steps, steps, rc)
    result = tmp_path / "result.json"
    book = tmp_path / "play.yml"
    book.write_text(json.dumps([{"hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": [
        {"name": "Start the slow step", "ansible.builtin.command": {
            "argv": ["sh", "-c", 'exec "$@" >"$0" 2>&1', str(log), "sh", "-c", body]},
         "async": 120, "poll": 0, "register": "started", "changed_when": True},
        {"name": "Wait for it", "sodalite.modak.async_wait": {
            "jid": "{{ started.ansible_job_id }}", "log": str(log), "label": "slow step", "timeout": timeout,
            "poll_interval": 1}, "register": "r", "ignore_errors": True},
        {"name": "Save the result", "ansible.builtin.copy": {"content": "{{ r | to_json }}", "dest": str(result)}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(book),
                           "-e", "ansible_python_interpreter=%s" % sys.executable],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    lines = [m.groups() for m in map(LINE.match, proc.stdout.splitlines()) if m]
    return proc, json.loads(result.read_text()), lines


def test_each_poll_shows_the_time_waited_and_the_logs_last_line(tmp_path):
    proc, result, lines = run_wait(tmp_path, 5)
    assert not result.get("failed") and result["finished"] and result["rc"] == 0, result
    running = [line for line in lines if line[0] == "RUNNING"]
    assert len(running) >= 2 and lines[-1][0] == "FINISHED" and lines[-1][4] == "STEP 5/5", proc.stdout
    waited = [int(h) * 3600 + int(m) * 60 + int(s) for _state, h, m, s, _last in lines]
    assert waited == sorted(waited) and waited[-1] >= 4, lines
    assert len(set(line[4] for line in running)) >= 2, lines             # the log's last line moves on
    assert [p["state"] for p in result["polls"]] == [line[0] for line in lines]
    assert result["log_tail"][-1] == "STEP 5/5"


def test_a_failing_command_fails_the_wait_with_its_own_result(tmp_path):
    _proc, result, lines = run_wait(tmp_path, 2, rc=3)
    assert result["failed"] and result["rc"] == 3 and result["msg"] == "non-zero return code", result
    assert lines[-1][0] == "FAILED" and lines[-1][4] == "STEP 2/2", lines


def test_timeout_fails_with_the_label(tmp_path):
    _proc, result, lines = run_wait(tmp_path, 30, timeout=3)
    assert result["failed"] and result["msg"] == "slow step has not finished after timeout=3 s", result
    assert result["finished"] is False and lines and all(line[0] == "RUNNING" for line in lines), lines
