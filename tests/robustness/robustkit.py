"""Shared by the robustness tests: counters behind docs/robustness.md, hostile payloads, stub programs, lint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if os.path.join(ROOT, "collections") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "collections"))

OUTPUT = os.path.join(ROOT, "tests", "output")
COUNTERS = os.path.join(OUTPUT, "robustness-counters")
SHELLCHECK = os.path.join(ROOT, ".venv", "bin", "shellcheck")
SCHEDULERS = ("slurm", "pbspro", "torque", "local", "gridengine")


def record(area, **counters):
    """Add counters of one area (summed over every call) to the figures of the running session."""
    os.makedirs(COUNTERS, exist_ok=True)
    path = os.path.join(COUNTERS, "%d-%s.jsonl" % (os.getpid(), uuid.uuid4().hex[:8]))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"area": area, "counters": counters}) + "\n")


# ---------------------------------------------------------------- hostile values

def payloads(canary):
    """Hostile strings; every one that could run a command would create ``canary``."""
    return [
        "x\ntouch %s" % canary,
        "x\rtouch %s" % canary,
        "x\r\n#SBATCH --wrap='touch %s'" % canary,
        "x\u2028touch %s" % canary,
        "x\u2029y",
        "x\x85touch %s" % canary,
        "x\x00touch %s" % canary,
        "x\x0bv\x0cf\x1b[31m",
        "$(touch %s)" % canary,
        "`touch %s`" % canary,
        "; touch %s" % canary,
        "&& touch %s" % canary,
        "| touch %s" % canary,
        "> %s" % canary,
        "' ; touch %s ; '" % canary,
        '" ; touch %s ; "' % canary,
        "\\'; touch %s; #" % canary,
        "#SBATCH --wrap='touch %s'" % canary,
        "\n#SBATCH --wrap=touch\n#PBS -W x=y",
        "#PBS -l walltime=999:00:00",
        "${IFS}touch${IFS}%s" % canary,
        "$HOME *",
        "{{ lookup('pipe', 'touch %s') }}" % canary,
        "{% for x in range(3) %}{{ x }}{% endfor %}",
        "../../../../tmp/modak-escape",
        "/etc/passwd",
        "-rf",
        "--wrap=touch %s" % canary,
        "",
        " ",
        "\u00e9\u4e2d\U0001f600",
        "A" * 5000,
        "$(touch %s)" % canary + "B" * 20000,
    ]


# ---------------------------------------------------------------- stub programs

STUB_RECORD = r'''#!/bin/bash
# stub: records its argv (NUL-separated) and the probe variable, then does the least its real self would
name=$(basename "$0")
call=$(mktemp "$MODAK_STUB_LOG/call.XXXXXXXX")
{ printf '%s\0' "$name" "${MODAK_PROBE-<unset>}"; printf '%s\0' "$@"; } >"$call"
'''

STUBS = {
    "apptainer": 'if [ "$1" = pull ]; then echo sif >"$3"; fi\nexit 0\n',
    "singularity": 'if [ "$1" = pull ]; then echo sif >"$3"; fi\nexit 0\n',
    "srun": 'while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n',
    "mpirun": 'while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do [ "$1" = -np ] && shift; shift; done\nexec "$@"\n',
    "mpiexec": 'while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do [ "$1" = -n ] && shift; shift; done\nexec "$@"\n',
    "timeout": 'while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done\nshift\nexec "$@"\n',
    "curl": "exit 0\n",
    "git": "exit 0\n",
    "module": "exit 0\n",
    "bash": "exit 0\n",       # only 'bash -c <build command>' reaches it: recorded, never run
    "show": "exit 0\n",       # the application
}


def install_stubs(folder):
    """Write the stubs into ``folder``/bin; returns (bin, log folder)."""
    bin_dir = os.path.join(folder, "bin")
    log = os.path.join(folder, "calls")
    os.makedirs(bin_dir, exist_ok=True)
    os.makedirs(log, exist_ok=True)
    for name, body in STUBS.items():
        path = os.path.join(bin_dir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(STUB_RECORD + body)
        os.chmod(path, 0o755)
    return bin_dir, log


def calls(log):
    """Recorded calls: list of (program, probe, argv)."""
    out = []
    for name in sorted(os.listdir(log)):
        with open(os.path.join(log, name), "rb") as handle:
            parts = handle.read().decode("utf-8", "surrogateescape").split("\0")[:-1]
        out.append((parts[0], parts[1], parts[2:]))
    return out


def run_script(path, bin_dir, log, cwd, timeout=30):
    """Run a job script with only the stubs and the system tools on PATH; /bin/bash runs it, not a stub."""
    env = {"PATH": bin_dir + ":/usr/bin:/bin", "HOME": cwd, "MODAK_STUB_LOG": log, "LANG": "C.UTF-8",
           "MODAK_IMAGE_DIR": os.path.join(cwd, "images")}
    return subprocess.run(["/bin/bash", path], cwd=cwd, env=env, capture_output=True, timeout=timeout, check=False)


# ---------------------------------------------------------------- lint

def bash_n(path):
    proc = subprocess.run(["/bin/bash", "-n", path], capture_output=True, text=True, check=False)
    return proc.returncode == 0, proc.stderr


def shellcheck_many(paths, chunk=200):
    """Run shellcheck over many scripts in few processes; returns {path: [messages]} of the failing ones."""
    failing = {}
    for start in range(0, len(paths), chunk):
        part = paths[start:start + chunk]
        proc = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", "--format=json1"] + part,
                              capture_output=True, text=True, check=False)
        for comment in json.loads(proc.stdout or '{"comments": []}')["comments"]:
            failing.setdefault(comment["file"], []).append("%s:%s SC%s %s" % (
                comment["file"], comment["line"], comment["code"], comment["message"]))
    return failing
