"""Hostile values of the second review: non-text and bash-owned variable names, raw directives that name files or
forge the idempotence key, values a plain loader crashes on, command words bash reads as syntax. Each is refused
with its path (nothing is written) or, for command words, run literally as the program."""

from __future__ import annotations

import base64
import itertools
import os
import subprocess

from robustkit import ROOT, record

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, dsl_rules, pipeline, shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra

CANARY = "/nonexistent/modak-canary"


def _doc(scheduler="slurm", **sections):
    doc = {"job": {"job_options": {"job_name": "h"}, "application": {"executable": "./app"},
                   "target": {"job_scheduler_type": scheduler}}}
    for section, values in sections.items():
        doc["job"].setdefault(section, {}).update(values)
    return doc


def _outcome(make, path_prefix):
    """'path' when refused with a problem under path_prefix, 'pathless' when refused elsewhere, else 'escaped'."""
    try:
        data = make()
        pipeline.optimise(data, None)
    except DslInvalid as exc:
        return "path" if any(p.path.startswith(path_prefix) for p in exc.problems) else "pathless"
    except ModakError:
        return "pathless"
    return "escaped"


def environment_cases():
    payloads = ["'$(touch %s)'" % CANARY, "`touch %s`" % CANARY, "a;b", "A B", "0", "PATH"]
    for text in payloads:
        key = base64.b64encode(text.encode()).decode()
        yield ("yaml-binary", lambda key=key: dsl.loads(
            "job:\n  application:\n    executable: ./a\n    environment:\n      !!binary %s: 1\n" % key, "yaml"))
    for key in (0, 1, -1, 2 ** 70, 1.5, True, False, None, b"X", (1, 2)):
        yield ("non-text", lambda key=key: _doc(application={"environment": {key: "v"}}))
    for name in sorted(dsl_rules.BASH_READONLY | dsl_rules.BASH_DYNAMIC):
        yield ("bash-owned", lambda name=name: _doc(application={"environment": {name: "1"}}))


def directive_cases():
    files = ("/etc/passwd", "../x", "x")
    slurm_file_options = ["output", "error", "input", "chdir", "export-file", "nodefile", "bbf", "container",
                          "wrap", "uid", "gid", "get-user-env"]
    abbreviations = ["--" + "output"[:n] for n in range(1, 6)] + ["--" + "chdir"[:n] for n in range(2, 5)]
    for option, path, form in itertools.product(slurm_file_options, files, ("=", " ")):
        yield ("slurm", "--%s%s%s" % (option, form, path))
    for option, path in itertools.product(abbreviations, files):
        yield ("slurm", "%s=%s" % (option, path))
    for letter, path in itertools.product("oeiDJ", files):
        yield ("slurm", "-%s %s" % (letter, path))
    for scheduler in ("pbspro", "torque"):
        for letter, path in itertools.product("oedwDSuCcTI", files):
            yield (scheduler, "-%s %s" % (letter, path))
        for sub in ("stagein=x@h:/etc/shadow", "stageout=/x@h:/etc/passwd", "x=FLAGS:ADVRES", "depend=afterok:1",
                    "group_list=root"):
            yield (scheduler, "-W %s" % sub)
    for scheduler in ("gridengine", "sge"):
        for option, path in itertools.product(("-o", "-e", "-i", "-wd", "-jsv", "-S", "-@"), files):
            yield (scheduler, "%s %s" % (option, path))
        for directive in ("-u root", "-b y", "-ac modak=0f3c", "-sc modak=0f3c", "-dc modak", "-C X", "-clear",
                          "-sync y", "-terse", "-w v", "-shell n", "-noshell", "-pty y"):
            yield (scheduler, directive)
    for name in ("lsf", "slurmx", "PBS"):
        yield (name, "--reservation=x")
    for scheduler in ("slurm", "pbspro", "torque", "local", "gridengine"):
        for value in ("modak:0f3c", "MODAK:0f3c", "modak:", "Modak:x"):
            yield (scheduler, "--comment=%s" % value)
            yield (scheduler, "--comment %s" % value)


def value_cases():
    yield ("date", lambda: dsl.loads("job:\n  application: {executable: ./a}\n  job_options: {defer_job: 2026-02-30}\n",
                                     "yaml"), "job.job_options.defer_job")
    for date in ("2026-02-30", "2026-13-01", "2026-00-10", "2026-01-01T24:00", "2025-02-29T10:00:00"):
        yield ("date", lambda date=date: _doc(job_options={"defer_job": date}), "job.job_options.defer_job")
    yield ("duplicate", lambda: dsl.loads("job:\n  application: {executable: ./a, executable: ./b}\n", "yaml"),
           "job.application.executable")
    yield ("duplicate", lambda: dsl.loads('{"job": {"application": {"executable": "./a", "executable": "./b"}}}',
                                          "json"), "job.application.executable")
    yield ("duplicate", lambda: dsl.loads('{"job": {"application": {"executable": "./a"}, "application": {}}}',
                                          "json"), "job.application")
    for text in (".nan", ".inf", "-.inf", ".NaN"):
        yield ("nan", lambda text=text: dsl.loads(
            "job:\n  application: {executable: ./a, minimal_efficiency: %s}\n" % text, "yaml"),
            "job.application.minimal_efficiency")
    for text in ("NaN", "Infinity", "-Infinity", "1e999"):
        yield ("nan", lambda text=text: dsl.loads(
            '{"job": {"application": {"executable": "./a", "environment": {"X": %s}}}}' % text, "json"),
            "job.application.environment.X")
    yield ("huge-int", lambda: dsl.loads("job:\n  application: {executable: ./a, threads: %s}\n" % ("7" * 5000),
                                         "yaml"), "job.application.threads")


def test_hostile_values_are_refused_with_their_path():
    tally = {"tried_env": 0, "tried_directives": 0, "tried_values": 0, "path": 0, "pathless": [], "escaped": []}
    for kind, make in environment_cases():
        tally["tried_env"] += 1
        result = _outcome(make, "job.application.environment")
        tally["path"] += result == "path"
        if result != "path":
            tally["pathless" if result == "pathless" else "escaped"].append((kind, result))
    for scheduler, directive in directive_cases():
        tally["tried_directives"] += 1
        result = _outcome(lambda: _doc(scheduler, job_options={"extra_directives": [directive]}),
                          "job.job_options.extra_directives[0]")
        if scheduler == "local" and not extra.forges_comment(directive):
            continue                        # a local run writes no directive
        tally["path"] += result == "path"
        if result != "path":
            tally["pathless" if result == "pathless" else "escaped"].append((scheduler, directive, result))
    for kind, make, path in value_cases():
        tally["tried_values"] += 1
        try:
            result = _outcome(make, path)
        except Exception as exc:  # pylint: disable=broad-except
            result = "crash: %r" % exc
        tally["path"] += result == "path"
        if result != "path":
            tally["pathless"].append((kind, path, result))
    record("hostile", tried_env=tally["tried_env"], tried_directives=tally["tried_directives"],
           tried_values=tally["tried_values"], rejected_with_path=tally["path"],
           pathless=len(tally["pathless"]), escaped=len(tally["escaped"]))
    assert not tally["escaped"], tally["escaped"][:10]
    assert not tally["pathless"], tally["pathless"][:10]
    assert tally["tried_directives"] > 200


def test_command_words_run_as_programs(tmp_path):
    """Every word bash reads as syntax or an assignment is run as the program of that name."""
    words = sorted(shell.RESERVED - {"!", "{", "}", "[[", "]]"}) + ["!", "{", "[[", "A=1", "B+=2", "C[0]=3"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    literal = 0
    wrong = []
    for index, word in enumerate(words):
        stub = bin_dir / word
        stub.write_text('#!/bin/bash\nprintf "%s|%s\\n" "$(basename "$0")" "$*" >>"$MODAK_CALLS"\n')
        stub.chmod(0o755)
        doc = _doc("local", application={"executable": word, "arguments": ["a b"]},
                   job_options={"job_name": "w%d" % index})
        folder = tmp_path / ("r%d" % index)
        folder.mkdir()
        script = folder / "job.sh"
        script.write_text(pipeline.optimise(doc, None).script.text)
        calls = folder / "calls"
        subprocess.run(["/bin/bash", str(script)], cwd=str(folder), timeout=30, check=False,
                       env={"PATH": "%s:/usr/bin:/bin" % bin_dir, "MODAK_CALLS": str(calls), "HOME": str(folder)})
        if calls.exists() and calls.read_text() == "%s|a b\n" % word:
            literal += 1
        else:
            wrong.append(word)
    record("hostile", command_words=len(words), command_words_literal=literal)
    assert not wrong, wrong


def test_the_test_session_writes_only_tests_output(tmp_path):
    """The figures hook writes tests/output/robustness.json; docs/robustness.md is left to the report script."""
    import figures  # pylint: disable=import-outside-toplevel
    doc = os.path.join(ROOT, "docs", "robustness.md")
    with open(doc, "rb") as handle:
        before = handle.read()
    stamp = os.stat(doc).st_mtime_ns
    complete = dict((area, {}) for area in figures.AREAS)
    assert figures.write(complete) is True
    with open(doc, "rb") as handle:
        assert handle.read() == before
    assert os.stat(doc).st_mtime_ns == stamp
    figures.write_doc(complete, str(tmp_path / "page.md"))
    assert (tmp_path / "page.md").read_text().startswith("# Robustness figures")
